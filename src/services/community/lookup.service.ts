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
/**
 * The org and source `/locales/` answers from, as OCL's (its `DEFAULT_LOCALES_REPO_URI`,
 * `/orgs/ISO/sources/iso639-1/`): one concept per ISO 639-1 code, the code its id, so that the
 * concept form, which offers the ids, gives names the codes sources declare (`en`, not `eng`).
 */
const LOCALES_ORG = 'ISO';
const LOCALES_SOURCE = 'iso639-1';
/** OCL's Locales lookup source, ISO 639-2 ids (`eng`), whose two-letter codes `iso639-1` holds. */
const OCL_LOCALES = 'Locales';
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
   * Creates the `OCL` org with its lookup sources, and the `ISO` org with the `iso639-1` source
   * `/locales/` reads, each when there is no org of its id: one transaction, under a lock, so
   * parallel starts create them once. Answers whether it created either.
   */
  async ensure(): Promise<boolean> {
    const admin = await this.repos.users.findByUsername(ADMIN_USERNAME);
    if (!admin)
      throw new Error(`The bootstrap administrator '${ADMIN_USERNAME}' must exist first.`);
    const lookups = LOOKUPS as Record<string, LookupConcept[]>;
    return this.repos.transaction(async (r) => {
      await r.lockNamed('ocl-lookup-org');
      let made = false;
      if (!(await r.orgs.mnemonicTaken(LOOKUP_ORG))) {
        const org = await this.createOrg(r, admin.id, LOOKUP_ORG, 'Open Concept Lab', {
          company: 'Open Concept Lab',
          website: 'https://openconceptlab.org',
        });
        for (const [name, concepts] of Object.entries(lookups)) {
          await this.createSource(r, org, { mnemonic: name, name, fullName: name }, concepts);
        }
        made = true;
      }
      if (!(await r.orgs.mnemonicTaken(LOCALES_ORG))) {
        const org = await this.createOrg(
          r,
          admin.id,
          LOCALES_ORG,
          'International Organization for Standardization (ISO)',
        );
        await this.createSource(
          r,
          org,
          {
            mnemonic: LOCALES_SOURCE,
            name: 'Iso6391',
            fullName:
              'ISO 639-1: Codes for the representation of names of languages -- Part 1: Alpha-2 code',
          },
          twoLetterLocales(lookups[OCL_LOCALES]),
        );
        made = true;
      }
      return made;
    });
  }

  /**
   * `/locales/`: the locales of the ISO 639-1 source, each with its two-letter code (its id, the
   * code names and descriptions take); 404 when the source is not there.
   */
  async locales(ctx: ServiceContext): Promise<LocaleView[]> {
    const page = await this.concepts.list(
      ctx,
      lookupSource(LOCALES_ORG, LOCALES_SOURCE),
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

  /** A public org administered by the bootstrap administrator. */
  private async createOrg(
    r: Repositories,
    adminId: string,
    mnemonic: string,
    name: string,
    fields: { company?: string; website?: string } = {},
  ): Promise<OrganizationEntity> {
    const org = await r.orgs.insert({
      mnemonic,
      name,
      ...fields,
      publicAccess: 'View',
      createdBy: ADMIN_USERNAME,
      updatedBy: ADMIN_USERNAME,
    });
    await r.orgs.upsertMembership(org.id, adminId, 'admin');
    return org;
  }

  private async createSource(
    r: Repositories,
    org: OrganizationEntity,
    names: { mnemonic: string; name: string; fullName: string },
    concepts: LookupConcept[],
  ): Promise<void> {
    const repo = await r.repos.insert(
      {
        kind: 'source',
        ...names,
        ownerOrgId: org.id,
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

function lookupSource(org: string, id: string): RepoRef {
  return { owner: { type: 'org', id: org }, kind: 'source', id };
}

/**
 * The locales of OCL's Locales source that have a two-letter code, each with that code as its id
 * and without its ISO 639-2 name (as OCL's `iso_639_1_locales.json`).
 */
function twoLetterLocales(locales: LookupConcept[]): LookupConcept[] {
  return locales.flatMap((locale) => {
    const code = locale.names.find((n) => n.name_type === ISO_639_1)?.name;
    if (!code) return [];
    return [
      { ...locale, id: code, names: locale.names.filter((n) => n.name_type !== 'ISO 639-2') },
    ];
  });
}
