import crypto from 'node:crypto';
import { z } from 'zod';
import {
  HEAD,
  type ConceptDescription,
  type ConceptEntity,
  type ConceptName,
  type ConceptVersionEntity,
} from '../../db/entities';
import { AppError } from '../../errors';
import {
  isPlainSearch,
  isUniqueViolation,
  type ConceptRead,
  type ConceptScope,
  type MappingRow,
  type ConceptSearch,
  type ConceptSortKey,
  type Raw,
  type ReadSnapshot,
  type Repositories,
  type SortSpec,
} from '../../repositories';
import { foldedWords, searchWords, widened } from '../../repositories/list';
import { authorize, requireUser } from '../shared/access';
import { announceChange, contentUrl } from '../shared/changes';
import { conceptChecksums } from '../shared/checksum';
import type { ServiceContext } from '../shared/context';
import { extraOf } from '../shared/extras';
import {
  negatable,
  pageOf,
  resolveSort,
  windowedListing,
  windowOf,
  WALK_BATCH,
  type ListParams,
  type Page,
} from '../shared/list';
import { keyedPage, listFilterOf, pageSlice, pagingOf } from '../shared/cursor';
import { hierarchyKey, holdingKey, plainPageKey } from '../shared/loaders';
import { endsOf, type EndSource, type MappingItem } from './mapping-views';
import { hierarchyRootOf, type RepositoryService } from './repository.service';
import { VersionedContent } from './versioned-content';
import { checkRepo, mayViewRepo, pathKey, type RepoView } from '../shared/paths';
import { parseConceptUrl, repoUrl, type RepoRef } from '../shared/urls';
import { extras, mnemonic, parseInput, requiredText } from '../shared/validation';

/** A concept at one of its versions, in the source (at HEAD or a version) it was read through. */
export interface ConceptView {
  source: RepoView;
  concept: ConceptEntity;
  version: ConceptVersionEntity;
  /** Read through an expansion asking for designations (names) or definitions (spec ops §2.2). */
  expansion?: { designations: boolean; definition: boolean };
  /** How many versions the concept has: on the items of a list read with `verbose`. */
  versionCount?: number;
  /** Whether it has children in the source version read: on the items of hierarchy lists. */
  hasChildren?: boolean;
}

/** What a source's concept list may narrow to beyond the list parameters. */
export interface ConceptListOptions {
  /** Only the source's hierarchy root (none when it has none), telling whether it has children. */
  onlyHierarchyRoot?: boolean;
}

/** A page's narrowing beyond the list parameters, and whether its items tell `hasChildren`. */
interface PageShape {
  narrow?: Pick<ConceptSearch, 'ids' | 'childOf'>;
  hierarchy?: boolean;
  /** A source version's list: a plain page is read with its siblings' (`plainConceptPage`). */
  sourceVersionId?: string;
  /** At HEAD, the source's change number as its path read it (`plainConceptPage`). */
  sourceHeadSeq?: string;
}

/** What a read brings along for the detail view (spec core §4.3). */
export interface ConceptInclude {
  /** The mappings the source holds from the concept (`includeMappings`). */
  mappings?: boolean;
  /** Those it holds to the concept (`includeInverseMappings`). */
  inverseMappings?: boolean;
}

/** A concept as its detail shows it (spec core §4.3): what one service call answers. */
export interface ConceptDetail {
  view: ConceptView;
  /** How many versions the concept has (all of them, not only up to this one). */
  versionCount: number;
  /** The newest source version (never HEAD) holding this concept version; null for none. */
  latestSourceVersion: string | null;
  /** With `include.mappings`: the mappings its source holds from it, ends resolved. */
  mappings: MappingItem[] | null;
  /** With `include.inverseMappings`: those its source holds to it. */
  inverseMappings: MappingItem[] | null;
}

/** How an edit treats what it does not send (spec core §4.3 and the reference clients). */
export type EditMode = 'partial' | 'replace';

/** The lists of a concept version that are sub-resources addressed by uuid (spec core §2.6). */
export type ConceptPart = 'names' | 'descriptions';
export type ConceptPartItem = ConceptName | ConceptDescription;

/** A concept version and one of its names or descriptions. */
export interface ConceptItemView extends ConceptView {
  item: ConceptPartItem;
}

const locale = z
  .string({ error: 'Must be a string.' })
  .trim()
  .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'Must be a locale code such as en or pt-BR.');
const optionalString = z
  .string({ error: 'Must be a string.' })
  .trim()
  .max(1000)
  .nullish()
  .transform((v) => (v ? v : null));

/** Nested name and description fields arrive in OCL's snake_case; camelCase is accepted too. */
const snakeKeys = (value: unknown): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(
        Object.entries(value).map(([k, v]) => [
          k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
          v,
        ]),
      )
    : value;

const nameSchema = z.preprocess(
  snakeKeys,
  z.object({
    uuid: z.string().optional(),
    name: requiredText.max(2000),
    locale,
    locale_preferred: z.boolean({ error: 'Must be a boolean.' }).default(false),
    name_type: optionalString,
    external_id: optionalString,
  }),
);
const descriptionSchema = z.preprocess(
  snakeKeys,
  z.object({
    uuid: z.string().optional(),
    description: z
      .string({ error: 'Must be a string.' })
      .trim()
      .min(1, 'This field is required.')
      .max(10000),
    locale,
    locale_preferred: z.boolean({ error: 'Must be a boolean.' }).default(false),
    description_type: optionalString,
    external_id: optionalString,
  }),
);

/** Per list: its item schema and the text a version comment quotes. */
const PARTS: Record<ConceptPart, { schema: z.ZodType; text: (item: ConceptPartItem) => string }> = {
  names: { schema: nameSchema, text: (item) => (item as ConceptName).name },
  descriptions: {
    schema: descriptionSchema,
    text: (item) => (item as ConceptDescription).description,
  },
};

const editFields = {
  conceptClass: requiredText.optional(),
  datatype: requiredText.optional(),
  externalId: optionalString.optional(),
  names: z
    .array(nameSchema, { error: 'Must be a list of names.' })
    .min(1, 'A concept must have at least one name.')
    .optional(),
  descriptions: z.array(descriptionSchema, { error: 'Must be a list of descriptions.' }).optional(),
  extras: extras.optional(),
  retired: z.boolean({ error: 'Must be a boolean.' }).optional(),
  parentConceptUrls: z
    .array(z.string({ error: 'Must be concept URLs.' }).trim().min(1).max(1000), {
      error: 'Must be a list of concept URLs.',
    })
    .max(100, 'At most 100 parents.')
    .optional(),
  updateComment: optionalString.optional(),
  comment: optionalString.optional(),
};
const createSchema = z.object({
  ...editFields,
  // Optional when the source assigns ids (autoid_concept_mnemonic, spec core §4.6).
  id: mnemonic.optional(),
  conceptClass: requiredText,
  names: z
    .array(nameSchema, { error: 'Must be a list of names.' })
    .min(1, 'A concept must have at least one name.'),
});
const editSchema = z.object(editFields);

/**
 * The schemas the service validates its input with, for the API reference (the REST edge sends
 * them with top-level keys in camelCase; `names` and `descriptions` items as they come).
 */
export const conceptInput = {
  create: createSchema,
  edit: editSchema,
  name: nameSchema,
  description: descriptionSchema,
};

const SORTS: Record<string, ConceptSortKey> = {
  bestmatch: 'bestMatch',
  lastupdate: 'lastUpdate',
  lastupdated: 'lastUpdate',
  name: 'name',
  id: 'id',
  datatype: 'datatype',
  conceptclass: 'conceptClass',
};

/** The content a concept version holds, before it is stored. */
export interface ConceptContent {
  conceptClass: string;
  datatype: string;
  externalId: string | null;
  names: ConceptName[];
  descriptions: ConceptDescription[];
  extras: Record<string, unknown> | null;
  retired: boolean;
  /** Parent concept ids in the same source (the hierarchy). */
  parentCodes: string[];
}

/** Concepts of sources (spec core §2.6, §4.3, §9.3–9.4): every accepted edit is a new version. */
export class ConceptService {
  /** The version mechanics concepts share with mappings. */
  private readonly versioned = new VersionedContent<
    ConceptEntity,
    ConceptVersionEntity,
    ConceptContent,
    ConceptView
  >(this.repos, {
    label: 'Concept',
    find: (repos, repositoryId, id) => repos.concepts.findConcept(repositoryId, id),
    versions: (repos) => repos.concepts,
    objectOf: (version) => ({ id: version.conceptId, mnemonic: version.mnemonic }) as ConceptEntity,
    contentOf,
    versionRow: (...row) => this.versionRow(...row),
    viewOf: (source, concept, version) => ({ source, concept, version }),
  });

  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    /** Lists are counted exactly up to this many concepts (`LIST_COUNT_CAP`); 0: always. */
    private readonly countCap = 0,
    /** `ConceptSearch.commonShare` of every search (`SEARCH_COMMON_SHARE`). */
    private readonly commonShare?: number,
  ) {}

  /** Creates a concept in HEAD with its first version; 400 when the id is taken. */
  async create(ctx: ServiceContext, sourceRef: RepoRef, input: unknown): Promise<ConceptDetail> {
    const actor = requireUser(ctx);
    this.versioned.assertHeadPath(sourceRef);
    const source = await this.writableSource(ctx, sourceRef);
    const { id, content, comment } = await this.draft(source, input, { assignItemIds: true });
    if (id !== undefined && (await this.repos.concepts.findConcept(source.repo.id, id))) {
      throw conceptTaken();
    }
    try {
      return await this.repos.transaction(async (repos) => {
        // The change number locks the source row, so assigned ids cannot collide.
        const seq = await repos.repos.nextChange(source.repo.id);
        const view = await this.insertIn(repos, source, seq, content, {
          id,
          username: actor.username,
          comment,
        });
        await announceChange(
          repos,
          source,
          actor,
          'CONCEPT_CREATED',
          contentUrl(source, 'concepts', view.concept.mnemonic),
        );
        // New in HEAD: no version holds it yet.
        return {
          view,
          versionCount: 1,
          latestSourceVersion: null,
          mappings: null,
          inverseMappings: null,
        };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conceptTaken();
      throw error;
    }
  }

  /**
   * A concept as a create sends it (OCL fields), validated by the create's rules: its id (absent
   * when the source assigns one), content and comment. `assignItemIds` gives names and
   * descriptions external ids by the source's schemes (a new concept); `known` says which parent
   * ids count as present besides the source's concepts (those a bulk import adds alongside).
   */
  async draft(
    source: RepoView,
    input: unknown,
    options: { assignItemIds: boolean; known?: ReadonlySet<string> },
  ): Promise<{ id: string | undefined; content: ConceptContent; comment: string | null }> {
    const data = parseInput(createSchema, input);
    const settings = source.repo.settings;
    if (data.id === undefined && !settings.autoidConceptMnemonic) {
      throw AppError.field('id', 'This field is required (the source assigns no concept ids).');
    }
    const content: ConceptContent = {
      conceptClass: data.conceptClass,
      datatype: data.datatype ?? 'N/A',
      externalId: data.externalId ?? null,
      names: data.names.map(withUuid),
      descriptions: (data.descriptions ?? []).map(withUuid),
      extras: data.extras ?? null,
      retired: data.retired ?? false,
      parentCodes: await this.parentCodesOf(
        source,
        data.parentConceptUrls ?? [],
        data.id,
        options.known,
      ),
    };
    return {
      id: data.id,
      content: options.assignItemIds ? this.withItemIds(source, content) : content,
      comment: data.updateComment ?? data.comment ?? null,
    };
  }

  /**
   * spec core §4.6: a new concept's names and descriptions sent without an external id get a
   * uuid when the source asks for one (`content` itself when it asks for none).
   */
  withItemIds(source: RepoView, content: ConceptContent): ConceptContent {
    const settings = source.repo.settings;
    if (
      settings.autoidConceptNameExternalId !== 'uuid' &&
      settings.autoidConceptDescriptionExternalId !== 'uuid'
    ) {
      return content;
    }
    const itemIds =
      (scheme: string | null | undefined) =>
      <T extends { external_id: string | null }>(item: T): T =>
        scheme === 'uuid' && !item.external_id
          ? { ...item, external_id: crypto.randomUUID() }
          : item;
    return {
      ...content,
      names: content.names.map(itemIds(settings.autoidConceptNameExternalId)),
      descriptions: content.descriptions.map(itemIds(settings.autoidConceptDescriptionExternalId)),
    };
  }

  /**
   * Inserts a concept with its first version into a source's HEAD, inside the caller's
   * transaction, which holds the source's change number `seq` (and so its lock): without `id`,
   * or with `id` taken when `fallback` allows, the source's scheme assigns one (sequential numbers
   * when it has none); external ids by the source's scheme when the content has none.
   */
  async insertIn(
    repos: Repositories,
    source: RepoView,
    seq: string,
    content: ConceptContent,
    options: { id?: string; fallback?: boolean; username: string; comment: string | null },
  ): Promise<ConceptView> {
    const settings = source.repo.settings;
    const free =
      options.id !== undefined &&
      !(options.fallback && (await repos.concepts.findConcept(source.repo.id, options.id)));
    const id = free
      ? options.id!
      : await assignId(
          settings.autoidConceptMnemonic ?? 'sequential',
          settings.autoidConceptMnemonicStartFrom,
          (from) => repos.concepts.nextNumericId(source.repo.id, 'mnemonic', from),
        );
    const row = { ...content };
    if (row.externalId === null && settings.autoidConceptExternalId) {
      row.externalId = await assignId(
        settings.autoidConceptExternalId,
        settings.autoidConceptExternalIdStartFrom,
        (from) => repos.concepts.nextNumericId(source.repo.id, 'external_id', from),
      );
    }
    const concept = await repos.concepts.insertConcept({
      repositoryId: source.repo.id,
      mnemonic: id,
      createdBy: options.username,
    });
    const version = await repos.concepts.insertVersion(
      this.versionRow(source, concept, row, seq, options.username, options.comment),
    );
    return { source, concept, version };
  }

  /**
   * A new version of a concept with `content`, inside the caller's transaction, which holds the
   * source's change number `seq`; false (nothing written) when its standard checksum equals the
   * current version's (spec core §9.4).
   */
  async reviseIn(
    repos: Repositories,
    source: RepoView,
    current: ConceptVersionEntity,
    content: ConceptContent,
    seq: string,
    options: { username: string; comment: string | null },
  ): Promise<boolean> {
    return this.versioned.reviseIn(repos, source, current, content, seq, options);
  }

  /**
   * A concept as HEAD or a source version sees it (spec core §9.3), or one of its versions by id.
   */
  async get(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    conceptVersion?: string,
  ): Promise<ConceptView> {
    return (await this.read(ctx, sourceRef, id, conceptVersion, {})).view;
  }

  /**
   * A concept's detail (spec core §4.3): the concept, its version count and, on request, the
   * mappings its source holds from and to it with their ends resolved, all from one statement.
   */
  async detail(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    conceptVersion?: string,
    include: ConceptInclude = {},
  ): Promise<ConceptDetail> {
    const { view, read } = await this.read(ctx, sourceRef, id, conceptVersion, include);
    const sources = await this.endSources(ctx, view.source, read);
    const items = (rows: MappingRow[]): MappingItem[] =>
      rows.map(({ mapping, version }) => ({
        view: { source: view.source, mapping, version },
        ends: endsOf(version, sources, read.endNames),
      }));
    return {
      view,
      versionCount: read.versionCount,
      latestSourceVersion: read.latestSourceVersion,
      mappings: include.mappings ? items(read.mappings) : null,
      inverseMappings: include.inverseMappings ? items(read.inverseMappings) : null,
    };
  }

  /** How many versions the concept has (a nested GraphQL field), batched per request. */
  async versionCount(ctx: ServiceContext, view: ConceptView): Promise<number> {
    return view.versionCount ?? ctx.loaders.conceptVersionCounts.load(view.concept.id);
  }

  /** The detail of a concept just written: no mappings, its version count. */
  private async detailOf(ctx: ServiceContext, view: ConceptView): Promise<ConceptDetail> {
    const [versionCount, latestSourceVersion] = await Promise.all([
      ctx.loaders.conceptVersionCounts.load(view.concept.id),
      ctx.loaders.latestSourceVersion.load(holdingKey(view.version)),
    ]);
    return { view, versionCount, latestSourceVersion, mappings: null, inverseMappings: null };
  }

  /** One statement reads the path, the concept and what its detail shows; then the path's rules. */
  private async read(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    conceptVersion: string | undefined,
    include: ConceptInclude,
  ): Promise<{ view: ConceptView; read: ConceptRead }> {
    const path = pathKey(ctx, sourceRef.owner, sourceRef);
    const read = await this.repos.concepts.read({
      owner: path.owner,
      source: sourceRef.id,
      version: sourceRef.version ?? HEAD,
      concept: id,
      conceptVersion,
      mappings: include.mappings ?? false,
      inverseMappings: include.inverseMappings ?? false,
      viewerId: path.viewerId,
    });
    const source = await checkRepo(ctx, sourceRef, read);
    const { concept, conceptVersion: version } = read;
    if (!concept) throw AppError.notFound(`Concept '${id}'`);
    if (!version) {
      throw AppError.notFound(
        conceptVersion === undefined
          ? `Concept '${id}' in ${source.version.mnemonic}`
          : `Version '${conceptVersion}' of concept '${id}'`,
      );
    }
    return { view: { source, concept, version }, read };
  }

  /**
   * The sources a read's mapping ends lie in, by repository id, as the read found them; null for
   * those the caller may not see.
   */
  private async endSources(
    ctx: ServiceContext,
    source: RepoView,
    read: ConceptRead,
  ): Promise<Map<string, EndSource | null>> {
    const sources = new Map<string, EndSource | null>([[source.repo.id, source]]);
    const orgs = new Map(read.endOrgs.map((org) => [org.id, org.mnemonic]));
    const users = new Map(read.endUsers.map((user) => [user.id, user.username]));
    for (const repo of read.endSources) {
      const owner: EndSource['owner'] =
        repo.ownerOrgId !== null
          ? { type: 'Organization', id: orgs.get(repo.ownerOrgId) ?? '' }
          : { type: 'User', id: users.get(repo.ownerUserId ?? '') ?? '' };
      sources.set(repo.id, (await mayViewRepo(ctx, repo)) ? { repo, owner } : null);
    }
    return sources;
  }

  /**
   * An edit: a new version in HEAD, or `UNCHANGED` (208) when its standard checksum equals the
   * current version's (spec core §9.4). `replace` (PUT) requires the names and replaces them.
   */
  async update(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    input: unknown,
    mode: EditMode,
  ): Promise<ConceptDetail> {
    this.versioned.assertHeadPath(sourceRef);
    const data = parseInput(editSchema, input);
    if (mode === 'replace' && data.names === undefined) {
      throw AppError.field('names', 'A concept must have at least one name.');
    }
    const parentCodes =
      data.parentConceptUrls === undefined
        ? undefined
        : await this.parentCodesOf(
            await this.repositories.get(ctx, { ...sourceRef, version: undefined }),
            data.parentConceptUrls,
            id,
          );
    const view = await this.change(
      ctx,
      sourceRef,
      id,
      data.updateComment ?? data.comment ?? null,
      (current) => ({
        conceptClass: data.conceptClass ?? current.conceptClass ?? 'Misc',
        datatype: data.datatype ?? current.datatype ?? 'N/A',
        externalId: data.externalId !== undefined ? data.externalId : current.externalId,
        names: data.names ? data.names.map(withUuid) : current.names,
        descriptions: data.descriptions ? data.descriptions.map(withUuid) : current.descriptions,
        extras: data.extras !== undefined ? data.extras : current.extras,
        retired: data.retired ?? current.retired,
        parentCodes: parentCodes ?? current.parentCodes,
      }),
    );
    return this.detailOf(ctx, view);
  }

  /** `DELETE`: a new, retired version; retiring twice is a 400. */
  async retire(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    comment?: unknown,
  ): Promise<ConceptView> {
    return this.versioned.retire(ctx, await this.editable(ctx, sourceRef), id, comment);
  }

  /** `PUT …/reactivate/`: a new, active version; a 400 when it is not retired. */
  async reactivate(ctx: ServiceContext, sourceRef: RepoRef, id: string): Promise<ConceptView> {
    return this.versioned.reactivate(ctx, await this.editable(ctx, sourceRef), id);
  }

  /** A name or description of a concept version by uuid; 404 when it has none such. */
  async getItem(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    part: ConceptPart,
    uuid: string,
    conceptVersion?: string,
  ): Promise<ConceptItemView> {
    const view = await this.get(ctx, sourceRef, id, conceptVersion);
    const item = view.version[part].find((i) => i.uuid === uuid);
    if (!item) throw itemNotFound(part, uuid, id);
    return { ...view, item };
  }

  /** `POST …/names/` or `…/descriptions/`: a new version with one more item, under a new uuid. */
  async addItem(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    part: ConceptPart,
    input: unknown,
  ): Promise<ConceptItemView> {
    let added: ConceptPartItem | undefined;
    const view = await this.change(ctx, sourceRef, id, null, (current) => {
      const item = { ...parseItem(part, input), uuid: crypto.randomUUID() };
      added = item;
      return {
        ...withPart(contentOf(current), part, [...current[part], item]),
        comment: `Added to ${part}: ${PARTS[part].text(item)}.`,
      };
    });
    return { ...view, item: added! };
  }

  /**
   * `PUT`/`PATCH …/names/:uuid/`: a new version in which that item has the fields sent and keeps
   * the others (and its uuid); 208 when that changes nothing.
   */
  async updateItem(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    part: ConceptPart,
    uuid: string,
    input: unknown,
  ): Promise<ConceptItemView> {
    let updated: ConceptPartItem | undefined;
    const view = await this.changeItem(ctx, sourceRef, id, part, uuid, (item) => {
      const fields = snakeKeys(input ?? {});
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
        throw AppError.invalid('The request body must be a JSON object.');
      }
      updated = { ...parseItem(part, { ...item, ...fields }), uuid: item.uuid };
      return { item: updated, comment: `Updated ${part}: ${PARTS[part].text(updated)}.` };
    });
    return { ...view, item: updated! };
  }

  /** `DELETE …/names/:uuid/`: a new version without that item; a concept keeps one name (400). */
  async removeItem(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    part: ConceptPart,
    uuid: string,
  ): Promise<ConceptView> {
    return this.changeItem(ctx, sourceRef, id, part, uuid, (item) => ({
      item: null,
      comment: `Deleted ${PARTS[part].text(item)} in ${part}.`,
    }));
  }

  /** One custom attribute of a concept version (spec operations §4.9); 404 when it has none such. */
  async getExtra(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    name: string,
    conceptVersion?: string,
  ): Promise<unknown> {
    const { version } = await this.get(ctx, sourceRef, id, conceptVersion);
    return extraOf(version.extras, name, `concept '${id}'`);
  }

  /**
   * `PUT …/extras/:name/` with `{"<name>": value}`: creates or updates one attribute in a new
   * version; 208 when it already has that value.
   */
  async setExtra(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    name: string,
    input: unknown,
  ): Promise<ConceptView> {
    return this.versioned.setExtra(ctx, await this.editable(ctx, sourceRef), id, name, input);
  }

  /** `DELETE …/extras/:name/`: a new version without that attribute; 404 when it has none such. */
  async removeExtra(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    name: string,
  ): Promise<ConceptView> {
    return this.versioned.removeExtra(ctx, await this.editable(ctx, sourceRef), id, name);
  }

  async listVersions(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    params: ListParams,
  ): Promise<Page<ConceptView>> {
    const { source, concept } = await this.get(ctx, { ...sourceRef, version: undefined }, id);
    const paging = pagingOf(params, { list: 'conceptVersions', concept: concept.id }, ['id']);
    const slice = pageSlice(
      await this.repos.concepts.listVersions(concept.id, paging.window),
      paging,
      params,
    );
    return keyedPage(
      slice.rows.map((version) => ({ source, concept, version })),
      slice,
      params,
      paging,
    );
  }

  /** The concepts of a source at HEAD or a version (spec core §4.3 list parameters). */
  async list(
    ctx: ServiceContext,
    sourceRef: RepoRef | RepoView,
    params: ListParams,
    options: ConceptListOptions = {},
  ): Promise<Page<ConceptView>> {
    const source = await this.repositories.at(ctx, sourceRef);
    if (!options.onlyHierarchyRoot) return this.inSource(ctx, source, params);
    const root = hierarchyRootOf(source);
    if (root === null) return pageOf([], 0, params);
    return this.inSource(ctx, source, params, { narrow: { ids: [root] }, hierarchy: true });
  }

  /**
   * A concept's children in the source version it is read through (the concepts naming it among
   * their parents), each telling whether it has children of its own: a hierarchy view's next level.
   */
  async children(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    params: ListParams,
  ): Promise<Page<ConceptView>> {
    const { source, concept } = await this.get(ctx, sourceRef, id);
    return this.inSource(ctx, source, params, {
      narrow: { childOf: concept.mnemonic },
      hierarchy: true,
    });
  }

  /** A concept's parents in the source version it is read through, as `children` shows them. */
  async parents(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    params: ListParams,
  ): Promise<Page<ConceptView>> {
    const { source, version } = await this.get(ctx, sourceRef, id);
    const codes = version.parentCodes ?? [];
    if (codes.length === 0) return pageOf([], 0, params);
    return this.inSource(ctx, source, params, { narrow: { ids: codes }, hierarchy: true });
  }

  /** Whether a concept has children (not retired) in the source version it was read through. */
  hasChildren(ctx: ServiceContext, view: ConceptView): Promise<boolean> {
    const { source, concept } = view;
    return ctx.loaders.conceptHasChildren.load(
      hierarchyKey(source.repo.id, source.version.seq, concept.mnemonic),
    );
  }

  private inSource(
    ctx: ServiceContext,
    source: RepoView,
    params: ListParams,
    shape: PageShape = {},
  ): Promise<Page<ConceptView>> {
    const scope: ConceptScope = {
      scope: 'source',
      repositoryId: source.repo.id,
      seq: source.version.seq,
    };
    const sort = resolveSort(params, SORTS, { key: 'bestMatch', desc: false });
    const sources = async () => new Map([[source.repo.id, source]]);
    return this.page(ctx, scope, params, sort, sources, {
      ...shape,
      sourceVersionId: source.version.id,
      sourceHeadSeq: source.version.seq === null ? source.repo.headSeq : undefined,
    });
  }

  /**
   * The members of a collection expansion held in `repositoryIds` (those the caller may see),
   * with the concept list parameters.
   */
  async listMembers(
    ctx: ServiceContext,
    expansionId: string,
    repositoryIds: string[],
    params: ListParams,
  ): Promise<Page<ConceptView>> {
    const sort = resolveSort(params, SORTS, { key: 'bestMatch', desc: false });
    return this.page(ctx, { scope: 'expansion', expansionId, repositoryIds }, params, sort, (ids) =>
      this.repositories.headViews(ctx, ids),
    );
  }

  /**
   * `/concepts/`: current concepts of every public source (spec core §4.3), with `source`, `user`
   * and `org` filters; private sources are listed only through their own endpoint.
   */
  async listPublic(ctx: ServiceContext, params: ListParams): Promise<Page<ConceptView>> {
    const { source, user, org, mapcode } = params.filters;
    if (user?.length && org?.length)
      throw AppError.field('org', 'user and org cannot be combined.');
    // mapcode `<owner>:<source>:<code>` (spec core §4.3): concepts mapped to that code; several
    // values must all match.
    const mapsTo = mapcode?.map((value) => {
      const parts = value.split(':');
      if (parts.length !== 3 || parts.some((p) => p.trim() === '')) {
        throw AppError.field('mapcode', `'${value}' is not of the form <owner>:<source>:<code>.`);
      }
      const [owner, sourceId, code] = parts.map((p) => p.trim());
      return {
        code,
        sourceUrls: [`/orgs/${owner}/sources/${sourceId}/`, `/users/${owner}/sources/${sourceId}/`],
      };
    });
    const sources = negatable(source);
    const scope: ConceptScope = {
      scope: 'public',
      sources: sources.only,
      notSources: sources.not,
      ownerUsers: user,
      ownerOrgs: org,
      mapsTo,
    };
    // spec core §4.3: the global list defaults to the latest updated first.
    const fallback: SortSpec<ConceptSortKey> = params.q
      ? { key: 'bestMatch', desc: false }
      : { key: 'lastUpdate', desc: true };
    const sort = resolveSort(params, SORTS, fallback);
    return this.page(ctx, scope, params, sort, (ids) => this.repositories.headViews(ctx, ids));
  }

  /**
   * Every concept of a source (at HEAD or a version) matching the list parameters, in the order
   * of its pages, `WALK_BATCH` at a time through a cursor of `snapshot`; `limit`/`offset` window
   * the walk when given (spec operations §4.10: pages cover every item once).
   */
  async walkSource(
    source: RepoView,
    params: ListParams,
    snapshot: ReadSnapshot,
    each: (batch: ConceptView[]) => Promise<void>,
  ): Promise<void> {
    const scope: ConceptScope = {
      scope: 'source',
      repositoryId: source.repo.id,
      seq: source.version.seq,
    };
    await this.walk(scope, params, snapshot, async () => new Map([[source.repo.id, source]]), each);
  }

  /** Refuses list parameters a walk would refuse, before anything is read or written. */
  checkWalk(params: ListParams): void {
    resolveSort(params, SORTS, { key: 'bestMatch', desc: false });
    windowOf(params);
  }

  /** `walkSource` over the members of a collection expansion held in `repositoryIds`. */
  async walkMembers(
    ctx: ServiceContext,
    expansionId: string,
    repositoryIds: string[],
    params: ListParams,
    snapshot: ReadSnapshot,
    each: (batch: ConceptView[]) => Promise<void>,
  ): Promise<void> {
    await this.walk(
      { scope: 'expansion', expansionId, repositoryIds },
      params,
      snapshot,
      (ids) => this.repositories.headViews(ctx, ids),
      each,
    );
  }

  private async walk(
    scope: ConceptScope,
    params: ListParams,
    snapshot: ReadSnapshot,
    sourcesOf: (repositoryIds: string[]) => Promise<Map<string, RepoView>>,
    each: (batch: ConceptView[]) => Promise<void>,
  ): Promise<void> {
    const sort = resolveSort(params, SORTS, { key: 'bestMatch', desc: false });
    const listing = windowedListing(
      this.repos.concepts.listing(scope, searchOf(params), sort),
      windowOf(params),
    );
    for await (const rows of snapshot.rows<{ row: Raw; object: Raw }>(listing, WALK_BATCH)) {
      const read = rows.map((r) => this.repos.concepts.rowOf(r));
      const sources = await sourcesOf([...new Set(read.map((r) => r.version.repositoryId))]);
      await each(
        read.map(({ version, concept }) => ({
          source: sources.get(version.repositoryId)!,
          concept,
          version,
        })),
      );
    }
  }

  private async page(
    ctx: ServiceContext,
    scope: ConceptScope,
    params: ListParams,
    sort: SortSpec<ConceptSortKey>,
    sourcesOf: (repositoryIds: string[]) => Promise<Map<string, RepoView>>,
    shape: PageShape = {},
  ): Promise<Page<ConceptView>> {
    const filter = { ...searchOf(params), ...shape.narrow, commonShare: this.commonShare };
    const paging = pagingOf(
      params,
      {
        list: 'concepts',
        // An expansion's members are its list whoever reads them (each sees those visible).
        scope: scope.scope === 'expansion' ? { expansionId: scope.expansionId } : scope,
        narrow: shape.narrow ?? null,
        sort,
        filter: listFilterOf(params),
      },
      this.repos.concepts.keyTypes(scope, filter, sort),
      this.countCap,
    );
    const { window } = paging;
    // Search by substring first (the trigram index answers it quickly); only when nothing
    // matches, with swapped letters undone (a few more lookups), and only then by similarity,
    // which finds any typo but scans far more.
    let found =
      scope.scope === 'source' && shape.sourceVersionId && isPlainSearch(filter)
        ? await ctx.loaders.plainConceptPage.load(
            plainPageKey({
              repositoryId: scope.repositoryId,
              versionId: shape.sourceVersionId,
              seq: scope.seq,
              headSeq: shape.sourceHeadSeq,
              sort,
              window,
            }),
          )
        : await this.repos.concepts.search(scope, filter, sort, window);
    for (const tolerance of ['swaps', 'similar'] as const) {
      // Whether the whole list has a match (a cursor page counts it only here, when it has none).
      if (!filter.q || found.rows.length > 0 || ((await found.count?.())?.total ?? found.total) > 0)
        break;
      filter.tolerance = tolerance;
      // Only the other spellings that some text holds are looked up; none, nothing more found.
      filter.spellings = await this.repos.concepts.spellingsInUse(filter.q, tolerance);
      if (!widened(searchWords(filter.q), tolerance, filter.spellings)) continue;
      found = await this.repos.concepts.search(scope, filter, sort, window);
    }
    const slice = pageSlice(found, paging, params);
    const facets = params.includeFacets
      ? await this.repos.concepts.facets(scope, filter)
      : undefined;
    // Through the request's loader: sibling pages of one GraphQL query find theirs together.
    const [concepts, sources] = await Promise.all([
      ctx.loaders.conceptById.loadMany([...new Set(slice.rows.map((v) => v.conceptId))]),
      sourcesOf([...new Set(slice.rows.map((v) => v.repositoryId))]),
    ]);
    const byId = new Map<string, ConceptEntity>();
    for (const concept of concepts) {
      if (concept instanceof Error) throw concept;
      if (concept) byId.set(concept.id, concept);
    }
    const counts = params.verbose
      ? await Promise.all(
          slice.rows.map((version) => ctx.loaders.conceptVersionCounts.load(version.conceptId)),
        )
      : undefined;
    const views: ConceptView[] = slice.rows.map((version, i) => ({
      source: sources.get(version.repositoryId)!,
      concept: byId.get(version.conceptId)!,
      version,
      versionCount: counts?.[i],
    }));
    if (shape.hierarchy) {
      const flags = await Promise.all(views.map((view) => this.hasChildren(ctx, view)));
      views.forEach((view, i) => (view.hasChildren = flags[i]));
    }
    return keyedPage(views, slice, params, paging, facets);
  }

  /** Every edit through a source path: the caller (a user) and the source HEAD they may edit. */
  private async change(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    comment: string | null,
    next: (current: ConceptVersionEntity) => ConceptContent & { comment?: string },
  ): Promise<ConceptView> {
    return this.versioned.change(ctx, await this.editable(ctx, sourceRef), id, comment, next);
  }

  /**
   * The one path of item edits: finds the item by uuid in the current version and puts `edit`'s
   * result in its place, or removes it when that is null (never the last name).
   */
  private async changeItem(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    part: ConceptPart,
    uuid: string,
    edit: (item: ConceptPartItem) => { item: ConceptPartItem | null; comment: string },
  ): Promise<ConceptView> {
    return this.change(ctx, sourceRef, id, null, (current) => {
      const items: ConceptPartItem[] = current[part];
      const target = items.find((i) => i.uuid === uuid);
      if (!target) throw itemNotFound(part, uuid, id);
      const { item, comment } = edit(target);
      const rest = items.flatMap((i) => (i !== target ? [i] : item ? [item] : []));
      if (part === 'names' && rest.length === 0) {
        throw AppError.field('names', 'A concept must have at least one name.');
      }
      return { ...withPart(contentOf(current), part, rest), comment };
    });
  }

  /** HEAD of a source the caller may edit content of; edits through a frozen version are 405. */
  async writableSource(ctx: ServiceContext, sourceRef: RepoRef): Promise<RepoView> {
    this.versioned.assertHeadPath(sourceRef);
    const source = await this.repositories.get(ctx, { ...sourceRef, version: undefined });
    if (source.repo.kind !== 'source') throw AppError.notFound(`Source '${sourceRef.id}'`);
    await authorize(ctx, { action: 'repo.editContent', repo: source.repo });
    return source;
  }

  /** `writableSource` for an edit, whose caller must be a user (401 before anything is read). */
  private async editable(ctx: ServiceContext, sourceRef: RepoRef): Promise<RepoView> {
    requireUser(ctx);
    return this.writableSource(ctx, sourceRef);
  }

  /**
   * The parents a concept names (`parent_concept_urls`): concepts of the same source, as their
   * ids; anything else is a 400 naming the URL.
   */
  private async parentCodesOf(
    source: RepoView,
    urls: string[],
    self: string | undefined,
    known?: ReadonlySet<string>,
  ): Promise<string[]> {
    const codes: string[] = [];
    for (const url of urls) {
      let code: string | null = null;
      try {
        const ref = parseConceptUrl(url);
        const sameOwner =
          ref.source.owner.type === 'org'
            ? source.owner.type === 'Organization' && ref.source.owner.id === source.owner.id
            : ref.source.owner.type === 'user' &&
              source.owner.type === 'User' &&
              ref.source.owner.username === source.owner.id;
        if (sameOwner && ref.source.id === source.repo.mnemonic && !ref.conceptVersion) {
          code = ref.id;
        }
      } catch {
        code = null;
      }
      if (code === null) {
        throw AppError.field('parentConceptUrls', `'${url}' is not a concept of this source.`);
      }
      if (code === self) {
        throw AppError.field('parentConceptUrls', 'A concept cannot be its own parent.');
      }
      if (!known?.has(code) && !(await this.repos.concepts.findConcept(source.repo.id, code))) {
        throw AppError.field('parentConceptUrls', `There is no concept '${code}' in this source.`);
      }
      if (!codes.includes(code)) codes.push(code);
    }
    return codes;
  }

  /** The version row `content` makes (checksums, display name, search text), for every write. */
  versionRow(
    source: RepoView,
    concept: ConceptEntity,
    content: ConceptContent,
    seq: string,
    username: string,
    comment: string | null,
  ): Partial<ConceptVersionEntity> {
    const checksums = conceptChecksums({
      concept_class: content.conceptClass,
      datatype: content.datatype,
      retired: content.retired,
      external_id: content.externalId,
      extras: content.extras,
      names: content.names.map(({ uuid: _uuid, ...name }) => name),
      descriptions: content.descriptions.map(({ uuid: _uuid, ...description }) => description),
      parent_concept_urls: content.parentCodes.map((code) => conceptUrlIn(source, code)),
    });
    const display = displayNameOf(content.names, source.repo.defaultLocale);
    return {
      conceptId: concept.id,
      repositoryId: source.repo.id,
      mnemonic: concept.mnemonic,
      validFromSeq: seq,
      validToSeq: null,
      ...content,
      displayName: display?.name ?? null,
      displayLocale: display?.locale ?? null,
      checksumStandard: checksums.standard,
      checksumSmart: checksums.smart,
      updateComment: comment,
      searchText: foldedWords(
        [
          concept.mnemonic,
          ...content.names.map((n) => n.name),
          ...content.descriptions.map((d) => d.description),
        ].join(' '),
      ).join(' '),
      createdBy: username,
    };
  }
}

/** The owner a path names, as the one-statement read looks it up. */
/** The display name: the preferred name in the source's default locale, else any preferred, else the first. */
function displayNameOf(names: ConceptName[], defaultLocale: string): ConceptName | undefined {
  return (
    names.find((n) => n.locale_preferred && n.locale === defaultLocale) ??
    names.find((n) => n.locale_preferred) ??
    names[0]
  );
}

/** What a concept version holds, as an edit starts from it. */
export function conceptContentOf(version: ConceptVersionEntity): ConceptContent {
  return contentOf(version);
}

function contentOf(version: ConceptVersionEntity): ConceptContent {
  return {
    conceptClass: version.conceptClass ?? 'Misc',
    datatype: version.datatype ?? 'N/A',
    externalId: version.externalId,
    names: version.names,
    descriptions: version.descriptions,
    extras: version.extras,
    retired: version.retired,
    parentCodes: version.parentCodes,
  };
}

function withPart(
  content: ConceptContent,
  part: ConceptPart,
  items: ConceptPartItem[],
): ConceptContent {
  return part === 'names'
    ? { ...content, names: items as ConceptName[] }
    : { ...content, descriptions: items as ConceptDescription[] };
}

/** One name or description as sent (snake_case or camelCase fields), validated. */
function parseItem(part: ConceptPart, input: unknown): ConceptPartItem {
  return parseInput(PARTS[part].schema, input) as ConceptPartItem;
}

function itemNotFound(part: ConceptPart, uuid: string, id: string): AppError {
  const noun = part === 'names' ? 'Name' : 'Description';
  return AppError.notFound(`${noun} '${uuid}' of concept '${id}'`);
}

/** Names and descriptions keep their uuid across versions when sent back; new ones get one. */
function withUuid<T extends { uuid?: string }>(item: T): T & { uuid: string } {
  return { ...item, uuid: item.uuid ?? crypto.randomUUID() };
}

/**
 * An id by a source's scheme: `uuid`, or `sequential` — the lowest number from `startFrom` up that
 * is above every numeric id in use (spec core §4.6).
 */
async function assignId(
  scheme: 'sequential' | 'uuid' | null | undefined,
  startFrom: number | null | undefined,
  nextNumber: (from: number) => Promise<string>,
): Promise<string> {
  if (scheme === 'uuid') return crypto.randomUUID();
  return nextNumber(startFrom ?? 1);
}

function conceptTaken(): AppError {
  return AppError.field('id', 'Concept ID must be unique within a source.');
}

/** The URL of a concept of a source, as `parent_concept_urls` name it. */
function conceptUrlIn(source: RepoView, code: string): string {
  return `${repoUrl(source.owner, 'source', source.repo.mnemonic)}concepts/${encodeURIComponent(code)}/`;
}

/** The concept list filters of a request (spec core §4.3). */
function searchOf(params: ListParams): ConceptSearch {
  return {
    q: params.q,
    conceptClass: params.filters.conceptClass,
    datatype: params.filters.datatype,
    locale: params.filters.locale,
    includeRetired:
      params.filters.includeRetired?.[0] === 'true' || params.filters.includeRetired?.[0] === '1',
    updatedSince: params.updatedSince,
    extras: params.extras,
    ids: params.filters.id,
  };
}
