import crypto from 'node:crypto';
import { HEAD, type OrganizationEntity } from '../../db/entities';
import { AppError } from '../../errors';
import type { Repositories } from '../../repositories';
import { ADMIN_USERNAME } from '../accounts/bootstrap';
import type { ServiceContext } from '../shared/context';
import type { ConceptService, ConceptView } from '../content/concept.service';
import { defaultListParams } from '../shared/list';
import type { RepoView } from '../shared/paths';
import type { RepoRef } from '../shared/urls';
// OCL's lookup values (oclapi2 `core/lookup_fixtures`), as data: concept classes, datatypes,
// name types, description types, map types and locales, each a list of concepts in OCL's JSON.
import LOOKUPS from './ocl-lookups.json';

/** The org that holds the lookup sources: the web client asks for it by this id. */
export const LOOKUP_ORG = 'OCL';
/** The source `/locales/` answers from. */
const LOCALES_SOURCE = 'Locales';
/** The name type of a locale's two-letter code. */
const ISO_639_1 = 'ISO 639-1';

interface LookupConcept {
  id: string;
  concept_class: string;
  datatype: string;
  external_id?: string;
  names: Array<{
    name: string;
    locale: string;
    locale_preferred: boolean;
    name_type: string | null;
  }>;
  descriptions?: Array<{ description: string; locale: string; locale_preferred: boolean }>;
}

/** A locale as `/locales/` answers it: the concept and its two-letter code. */
export interface LocaleView {
  concept: ConceptView;
  locale: string;
}

/**
 * OCL's reference content for authoring: an `OCL` org with the sources the concept and mapping
 * forms pick their values from, created on first start; and the lookups that read them.
 */
export class LookupService {
  constructor(
    private readonly repos: Repositories,
    private readonly concepts: ConceptService,
  ) {}

  /**
   * Creates the `OCL` org with its lookup sources when there is no org of that id: one
   * transaction, under a lock, so parallel starts create it once. Answers whether it created it.
   */
  async ensure(): Promise<boolean> {
    const admin = await this.repos.users.findByUsername(ADMIN_USERNAME);
    if (!admin)
      throw new Error(`The bootstrap administrator '${ADMIN_USERNAME}' must exist first.`);
    return this.repos.transaction(async (r) => {
      await r.lockNamed('ocl-lookup-org');
      if (await r.orgs.mnemonicTaken(LOOKUP_ORG)) return false;
      const org = await r.orgs.insert({
        mnemonic: LOOKUP_ORG,
        name: 'Open Concept Lab',
        company: 'Open Concept Lab',
        website: 'https://openconceptlab.org',
        publicAccess: 'View',
        createdBy: ADMIN_USERNAME,
        updatedBy: ADMIN_USERNAME,
      });
      await r.orgs.upsertMembership(org.id, admin.id, 'admin');
      for (const [name, concepts] of Object.entries(LOOKUPS as Record<string, LookupConcept[]>)) {
        await this.createSource(r, org, name, concepts);
      }
      return true;
    });
  }

  /**
   * `/locales/`: the locales of OCL's Locales source that have a two-letter code (the codes names
   * and descriptions take), with that code; 404 when the source is not there.
   */
  async locales(ctx: ServiceContext): Promise<LocaleView[]> {
    const page = await this.concepts.list(
      ctx,
      lookupSource(LOCALES_SOURCE),
      defaultListParams({ limit: 0 }),
    );
    return page.items.flatMap((concept) => {
      const code = concept.version.names.find((n) => n.name_type === ISO_639_1)?.name;
      return code ? [{ concept, locale: code }] : [];
    });
  }

  /** `{source}/concepts/lookup/`: every current concept of a source, for a form's pick list. */
  async values(ctx: ServiceContext, sourceRef: RepoRef): Promise<ConceptView[]> {
    if (sourceRef.version !== undefined) {
      throw new AppError('NOT_ALLOWED', 'Lookup values are read at HEAD.');
    }
    return (await this.concepts.list(ctx, sourceRef, defaultListParams({ limit: 0 }))).items;
  }

  private async createSource(
    r: Repositories,
    org: OrganizationEntity,
    name: string,
    concepts: LookupConcept[],
  ): Promise<void> {
    const repo = await r.repos.insert(
      {
        kind: 'source',
        mnemonic: name,
        ownerOrgId: org.id,
        name,
        fullName: name,
        publicAccess: 'View',
        defaultLocale: 'en',
        supportedLocales: ['en'],
        sourceType: 'dictionary',
        settings: {},
        createdBy: ADMIN_USERNAME,
        updatedBy: ADMIN_USERNAME,
      },
      ADMIN_USERNAME,
    );
    const head = (await r.repos.findVersion(repo.id, HEAD))!;
    const source: RepoView = {
      repo,
      version: head,
      owner: { type: 'Organization', id: org.mnemonic, org },
    };
    const seq = await r.repos.nextChange(repo.id);
    for (const concept of concepts) {
      await this.concepts.insertIn(
        r,
        source,
        seq,
        {
          conceptClass: concept.concept_class,
          datatype: concept.datatype,
          externalId: concept.external_id ?? null,
          names: concept.names.map((n) => ({ ...n, uuid: crypto.randomUUID(), external_id: null })),
          descriptions: (concept.descriptions ?? []).map((d) => ({
            ...d,
            uuid: crypto.randomUUID(),
            external_id: null,
            description_type: null,
          })),
          extras: null,
          retired: false,
          parentCodes: [],
        },
        { id: concept.id, username: ADMIN_USERNAME, comment: null },
      );
    }
  }
}

function lookupSource(id: string): RepoRef {
  return { owner: { type: 'org', id: LOOKUP_ORG }, kind: 'source', id };
}
