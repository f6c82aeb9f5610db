import { z } from 'zod';
import type { MappingVersionEntity } from '../../db/entities';
import { AppError } from '../../errors';
import type { MatchHit, MatchQuery, MatchTarget, Repositories } from '../../repositories';
import { foldedWords } from '../../repositories/list';
import { isSuperuser, requireUser } from '../shared/access';
import type { ServiceContext } from '../shared/context';
import type { RepositoryService, RepoView } from '../content/repository.service';
import { ownerUrl, parseRepoUrl, repoUrl, type RepoRef } from '../shared/urls';
import { parseInput } from '../shared/validation';

/** Rows one statement matches (spec operations §4.5: rows are processed in batches). */
export const MATCH_BATCH_ROWS = 100;
/** Rows one request may send; clients send larger sheets as several requests. */
export const MATCH_MAX_ROWS = 2_000;
/** Results one row may ask for (`limit`). */
export const MATCH_MAX_LIMIT = 100;

/** The query parameters of `$match` (spec operations §4.5), as the edges parse them. */
export interface MatchOptions {
  verbose?: boolean;
  brief?: boolean;
  limit?: number;
  offset?: number;
  page?: number;
  includeRetired?: boolean;
  bestMatch?: boolean;
  semantic?: boolean;
  numCandidates?: number;
  kNearest?: number;
  encoderModel?: string;
  reranker?: boolean;
}

/** One answer row: the input with `__index`, its ranked results, and the echoes. */
export interface MatchRowResult {
  row: Record<string, unknown>;
  results: Array<Record<string, unknown>>;
  map_config: MapConfig[];
  filter: Record<string, unknown>;
}

const text = z.union([z.string(), z.number()]).transform((v) => String(v));

/** The longest text a row field matches by: longer is no term (and overflows a tsvector). */
const MAX_ROW_TEXT = 10_000;

const mapConfigSchema = z
  .object({
    type: z.enum(['mapping-code', 'mapping-list']),
    input_column: z.string().min(1),
    target_source_url: z.string().min(1).optional(),
    separator: z.string().min(1).optional(),
    delimiter: z.string().min(1).optional(),
    target_urls: z.record(z.string(), z.string()).optional(),
  })
  .strict()
  .superRefine((c, issue) => {
    if (c.type === 'mapping-code' && !c.target_source_url)
      issue.addIssue({ code: 'custom', message: 'mapping-code needs target_source_url.' });
    if (c.type === 'mapping-list' && !c.target_urls)
      issue.addIssue({ code: 'custom', message: 'mapping-list needs target_urls.' });
  });
type MapConfig = z.infer<typeof mapConfigSchema>;

const bodySchema = z
  .object({
    target_repo_url: z.string().min(1).optional(),
    target_repo: z
      .object({
        owner: z.string().min(1),
        source: z.string().min(1),
        source_version: z.string().min(1).optional(),
        owner_type: z.enum(['Organization', 'User', 'org', 'user']).optional(),
      })
      .optional(),
    rows: z
      .array(z.record(z.string(), z.unknown()))
      .min(1, 'rows must hold at least one row.')
      .max(MATCH_MAX_ROWS, `At most ${MATCH_MAX_ROWS} rows per request.`),
    filter: z.record(z.string(), z.unknown()).optional(),
    map_config: z.array(mapConfigSchema).optional(),
  })
  .refine((b) => (b.target_repo_url === undefined) !== (b.target_repo === undefined), {
    message: 'Give one of target_repo_url or target_repo.',
    path: ['target_repo_url'],
  });

/** The schemas the service validates its input with, for the API reference. */
export const matchInput = { match: bodySchema };

/** The row fields the lexical match reads; others are echoed only. */
const ROW_TEXT = ['id', 'name', 'description', 'concept_class', 'datatype', 'mapping_code'];
const ROW_CODES = ['mapping_code', 'same_as_map_codes', 'other_map_codes', 'mapping_list'];
/** The facet filters a target answers (`filter`), besides `locale` and the mapping filters. */
const FILTERS: Record<string, 'conceptClass' | 'datatype'> = {
  concept_class: 'conceptClass',
  conceptClass: 'conceptClass',
  datatype: 'datatype',
};
const MAPPING_FILTERS = ['target_repo', 'target_repo_map_type'];

/** The algorithms a result's `search_meta.algorithm` names (spec operations §4.5). */
const LEXICAL = 'ocl-search';
const BRIDGE = 'ocl-ciel-bridge';

/** `filter` as the service applies it. */
interface Filters {
  facets: { conceptClass?: string; datatype?: string };
  /** `target_repo`: a source URL (its version, if any, names the version bridged to). */
  targetRepo: RepoRef | null;
  /** `target_repo_map_type`: map types, upper case. */
  mapTypes: string[] | null;
}

/**
 * `$match` (spec operations §4.5): rows of a spreadsheet matched to the concepts of a target
 * source version, lexically (`ocl-search`), a batch of rows per statement.
 */
export class MatchService {
  /** The bridging reference source's URL (no version), lower case; null: no bridge. */
  private readonly bridgeUrl: string | null;

  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly requiresApproval: boolean,
    bridgeSource: string | null,
  ) {
    this.bridgeUrl = bridgeSource ? unversioned(parseRepoUrl(bridgeSource, 'source')) : null;
  }

  async match(
    ctx: ServiceContext,
    options: MatchOptions,
    input: unknown,
  ): Promise<MatchRowResult[]> {
    await this.assertMayMatch(ctx);
    const window = windowOf(options);
    assertSemanticRanges(options);
    const body = parseInput(bodySchema, input);
    const filter = body.filter ?? {};
    const filters = filtersOf(filter);
    const target = await this.resolve(ctx, targetRefOf(body), 'target_repo_url');
    assertLexical(options, target);
    const { mappedTo, reached } = await this.mappingFilter(ctx, target, filters);
    const mapConfig = body.map_config ?? [];
    const queries = body.rows.map((row, index) => queryOf(row, index, mapConfig, filters.facets));
    const hits: MatchHit[] = [];
    for (let at = 0; at < queries.length; at += MATCH_BATCH_ROWS) {
      hits.push(
        ...(await this.repos.match.match(
          {
            repositoryId: target.repo.id,
            seq: target.version.seq,
            includeRetired: options.includeRetired ?? false,
            bestMatch: options.bestMatch ?? false,
            limit: window.limit,
            offset: window.offset,
            mappedTo,
            bridgeTo: reached ? { repositoryId: reached.repo.id, seq: reached.version.seq } : null,
          },
          queries.slice(at, at + MATCH_BATCH_ROWS),
        )),
      );
    }
    // What the results are concepts of: the target, or the source reached through the bridge.
    const answered = reached ?? target;
    const mappings = options.verbose ? await this.mappingsOf(answered, hits) : undefined;
    const byRow = new Map<number, MatchHit[]>();
    for (const hit of hits) byRow.set(hit.index, [...(byRow.get(hit.index) ?? []), hit]);
    return body.rows.map((row, index) => ({
      row: { ...row, __index: index },
      results: (byRow.get(index) ?? []).map((hit) =>
        resultOf(answered, target, hit, window.limit, options, mappings),
      ),
      map_config: mapConfig,
      filter,
    }));
  }

  /**
   * `filter.target_repo` (and `target_repo_map_type`): on the bridging source, naming another
   * source, the bridge (spec operations §4.5: rows matched against the bridge, answered with the
   * other source's concepts its mappings reach); elsewhere a facet: concepts mapped to it.
   */
  private async mappingFilter(
    ctx: ServiceContext,
    target: RepoView,
    filters: Filters,
  ): Promise<{ mappedTo: MatchTarget['mappedTo']; reached: RepoView | null }> {
    const { targetRepo, mapTypes } = filters;
    if (!targetRepo)
      return {
        mappedTo: mapTypes ? { repositoryId: null, url: null, mapTypes } : null,
        reached: null,
      };
    const url = repoUrlOf({ ...targetRepo, version: undefined });
    const targetUrl = repoUrl(target.owner, 'source', target.repo.mnemonic);
    const bridging =
      this.bridgeUrl !== null &&
      targetUrl.toLowerCase() === this.bridgeUrl &&
      url.toLowerCase() !== this.bridgeUrl;
    if (bridging) {
      const reached = await this.resolve(ctx, targetRepo, 'filter.target_repo');
      const canonical = repoUrl(reached.owner, 'source', reached.repo.mnemonic);
      return { mappedTo: { repositoryId: reached.repo.id, url: canonical, mapTypes }, reached };
    }
    // A facet: the mappings name the source by URL; by id too when the caller may see it here.
    const found = await this.repositories
      .get(ctx, { ...targetRepo, version: undefined })
      .catch((error: unknown) => {
        if (unseen(error)) return null;
        throw error;
      });
    return {
      mappedTo: {
        repositoryId: found?.repo.id ?? null,
        url: found ? repoUrl(found.owner, 'source', found.repo.mnemonic) : url,
        mapTypes,
      },
      reached: null,
    };
  }

  /** spec operations §5.1: signed in (401), and approved when the instance requires it (403). */
  private async assertMayMatch(ctx: ServiceContext): Promise<void> {
    const actor = requireUser(ctx);
    if (!this.requiresApproval || isSuperuser(actor)) return;
    const [user] = await this.repos.users.findByIds([actor.id]);
    if (!user?.matchApproved) {
      throw new AppError(
        'FORBIDDEN',
        'You are currently in waitlist for $match operation: an administrator must approve you for matching.',
      );
    }
  }

  /**
   * A source named by a `$match` body (the target, or the source a bridge reaches), resolved to
   * the version named, else to the latest released one, else HEAD. Nothing is said of a source
   * the caller may not see: it is not found, as a missing one.
   */
  private async resolve(ctx: ServiceContext, ref: RepoRef, field: string): Promise<RepoView> {
    try {
      if (ref.version === undefined) {
        const released = await this.repositories.latestReleased(ctx, { ...ref, version: 'latest' });
        if (released) return released;
      }
      return await this.repositories.get(ctx, ref);
    } catch (error) {
      if (unseen(error))
        throw AppError.notFound(
          `${field === 'target_repo_url' ? 'Target repository' : 'Repository'} '${repoUrlOf(ref)}'`,
        );
      throw error;
    }
  }

  private async mappingsOf(
    target: RepoView,
    hits: MatchHit[],
  ): Promise<Map<string, MappingVersionEntity[]>> {
    const ids = [...new Set(hits.map((h) => h.version.conceptId))];
    const found = new Map<string, MappingVersionEntity[]>();
    if (ids.length === 0) return found;
    const rows = await this.repos.mappings.ofConcepts(
      target.repo.id,
      target.version.seq,
      ids,
      false,
    );
    for (const row of rows) {
      const key = row.fromConceptId as string;
      found.set(key, [...(found.get(key) ?? []), row]);
    }
    return found;
  }
}

function repoUrlOf(ref: RepoRef): string {
  const owner = ref.owner;
  const id = owner.type === 'org' ? owner.id : owner.type === 'user' ? owner.username : 'user';
  return repoUrl(
    { type: owner.type === 'org' ? 'Organization' : 'User', id },
    'source',
    ref.id,
    ref.version,
  );
}

/** A source the caller may not see, or that does not exist: the two are answered alike. */
function unseen(error: unknown): boolean {
  return error instanceof AppError && (error.code === 'FORBIDDEN' || error.code === 'NOT_FOUND');
}

/** The target a body names: `target_repo_url`, or `{owner, source, source_version}`. */
function targetRefOf(body: z.infer<typeof bodySchema>): RepoRef {
  if (body.target_repo_url !== undefined)
    return sourceRefOf(body.target_repo_url, 'target_repo_url');
  const t = body.target_repo!;
  const user = t.owner_type === 'User' || t.owner_type === 'user';
  return {
    owner: user ? { type: 'user', username: t.owner } : { type: 'org', id: t.owner },
    kind: 'source',
    id: t.source,
    version: t.source_version,
  };
}

function sourceRefOf(url: string, field: string): RepoRef {
  try {
    return parseRepoUrl(url, 'source');
  } catch {
    throw AppError.field(
      field,
      `'${url}' is not a source URL like /orgs/:org/sources/:source/[:version/].`,
    );
  }
}

/** A source URL without its version, lower case: how the bridge is recognised. */
function unversioned(ref: RepoRef): string {
  return repoUrlOf({ ...ref, version: undefined }).toLowerCase();
}

/** `limit` (default 1), and `offset` or `page` (paging applies to each row). */
function windowOf(options: MatchOptions): { limit: number; offset: number } {
  const limit = options.limit ?? 1;
  if (!Number.isInteger(limit) || limit < 1 || limit > MATCH_MAX_LIMIT)
    throw AppError.field('limit', `limit must be an integer from 1 to ${MATCH_MAX_LIMIT}.`);
  const page = options.page ?? 1;
  if (!Number.isInteger(page) || page < 1)
    throw AppError.field('page', 'page must be a positive integer.');
  const offset = options.offset ?? (page - 1) * limit;
  if (!Number.isInteger(offset) || offset < 0 || offset > 10_000)
    throw AppError.field('offset', 'offset must be an integer from 0 to 10000.');
  return { limit, offset };
}

/** spec operations §8: the ranges of the semantic parameters. */
function assertSemanticRanges(options: MatchOptions): void {
  const range = (name: 'numCandidates' | 'kNearest', max: number): void => {
    const value = options[name];
    if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > max))
      throw AppError.field(name, `${name} must be an integer from 1 to ${max}.`);
  };
  range('numCandidates', 3000);
  range('kNearest', 100);
}

/** spec operations §4.5: semantic matching is refused (the target has no encoder). */
function assertLexical(options: MatchOptions, target: RepoView): void {
  if (options.reranker && !options.semantic)
    throw AppError.field('reranker', 'reranker applies to semantic matching only.');
  const asked = options.semantic
    ? 'semantic'
    : options.encoderModel !== undefined
      ? 'encoder_model'
      : undefined;
  if (asked) {
    throw AppError.field(
      asked,
      `Semantic matching is not enabled for the repository '${target.repo.mnemonic}': only lexical matching (ocl-search) is available.`,
    );
  }
}

function filtersOf(filter: Record<string, unknown>): Filters {
  const facets: Filters['facets'] = {};
  let targetRepo: RepoRef | null = null;
  let mapTypes: string[] | null = null;
  for (const [key, value] of Object.entries(filter)) {
    if (key === 'locale') {
      if (typeof value !== 'string') throw AppError.field('filter.locale', 'Must be a string.');
      continue;
    }
    const facet = FILTERS[key];
    if (!facet && !MAPPING_FILTERS.includes(key)) {
      throw AppError.field(
        `filter.${key}`,
        `Unknown filter '${key}'; a target filters by ${[...Object.keys(FILTERS), ...MAPPING_FILTERS].join(', ')} and locale.`,
      );
    }
    if (typeof value !== 'string' || value.trim() === '')
      throw AppError.field(`filter.${key}`, 'Must be a non-empty string.');
    if (key === 'target_repo') targetRepo = sourceRefOf(value.trim(), 'filter.target_repo');
    else if (key === 'target_repo_map_type')
      mapTypes = value
        .split(',')
        .map((t) => t.trim().toUpperCase())
        .filter(Boolean);
    else facets[facet] = value.trim();
  }
  return { facets, targetRepo, mapTypes: mapTypes?.length ? mapTypes : null };
}

/** A row as the repository matches it: folded texts, codes, filters; bad values are 400s. */
function queryOf(
  row: Record<string, unknown>,
  index: number,
  mapConfig: MapConfig[],
  facets: { conceptClass?: string; datatype?: string },
): MatchQuery {
  const field = (name: string): string | null => {
    const value = row[name];
    if (value === undefined || value === null || value === '') return null;
    const parsed = text.safeParse(value);
    if (!parsed.success)
      throw AppError.field(`rows[${index}].${name}`, 'Must be a string or a number.');
    if (parsed.data.length > MAX_ROW_TEXT)
      throw AppError.field(`rows[${index}].${name}`, `At most ${MAX_ROW_TEXT} characters.`);
    return parsed.data.trim() || null;
  };
  for (const name of [...ROW_TEXT, ...ROW_CODES]) field(name);
  const synonyms = row.synonyms;
  const synonymList =
    synonyms === undefined || synonyms === null
      ? []
      : Array.isArray(synonyms)
        ? synonyms
        : [synonyms];
  if (synonymList.some((s) => typeof s !== 'string' && typeof s !== 'number'))
    throw AppError.field(`rows[${index}].synonyms`, 'Must be a string or a list of strings.');
  if (synonymList.some((s) => String(s).length > MAX_ROW_TEXT))
    throw AppError.field(`rows[${index}].synonyms`, `At most ${MAX_ROW_TEXT} characters each.`);
  const fold = (value: string | null): string | null =>
    value === null ? null : foldedWords(value).join(' ') || null;
  const name = fold(field('name'));
  const terms = [
    ...(name ? [name] : []),
    ...synonymList.map((s) => fold(String(s))).filter((s): s is string => s !== null),
  ];
  const properties: Record<string, string> = {};
  let conceptClass = field('concept_class') ?? facets.conceptClass ?? null;
  let datatype = field('datatype') ?? facets.datatype ?? null;
  for (const key of Object.keys(row).filter((k) => k.startsWith('property:'))) {
    const value = field(key);
    if (value === null) continue;
    const property = key.slice('property:'.length);
    if (property === 'class') conceptClass = value;
    else if (property === 'datatype') datatype = value;
    else properties[property] = value;
  }
  return {
    index,
    name,
    terms,
    description: fold(field('description')),
    code: field('id'),
    mappingCodes: codesOf(index, field, mapConfig),
    conceptClass,
    datatype,
    properties,
  };
}

/** `mapping_code` (and the deprecated lists), then what each `map_config` entry reads. */
function codesOf(
  index: number,
  field: (name: string) => string | null,
  mapConfig: MapConfig[],
): MatchQuery['mappingCodes'] {
  const codes: MatchQuery['mappingCodes'] = [];
  const direct = field('mapping_code');
  if (direct) codes.push({ code: direct, sourceUrl: null });
  for (const name of ['same_as_map_codes', 'other_map_codes']) {
    for (const code of (field(name) ?? '').split(',').map((c) => c.trim()))
      if (code) codes.push({ code, sourceUrl: null });
  }
  for (const config of mapConfig) {
    const value = field(config.input_column);
    if (value === null) continue;
    if (config.type === 'mapping-code') {
      codes.push({ code: value, sourceUrl: config.target_source_url ?? null });
      continue;
    }
    for (const entry of value.split(config.delimiter ?? ',').map((e) => e.trim())) {
      if (!entry) continue;
      const at = entry.indexOf(config.separator ?? ':');
      if (at < 0) continue;
      const source = entry.slice(0, at).trim();
      const code = entry.slice(at + (config.separator ?? ':').length).trim();
      const url = config.target_urls?.[source];
      if (!url) {
        throw AppError.field(
          `rows[${index}].${config.input_column}`,
          `'${source}' is not a source named in map_config target_urls.`,
        );
      }
      if (code) codes.push({ code, sourceUrl: url });
    }
  }
  return codes;
}

/** One result as spec operations §4.5 lists its fields; `brief` the least, `verbose` the most. */
function resultOf(
  target: RepoView,
  matched: RepoView,
  hit: MatchHit,
  limit: number,
  options: MatchOptions,
  mappings: Map<string, MappingVersionEntity[]> | undefined,
): Record<string, unknown> {
  const v = hit.version;
  const url = conceptUrlOf(target, v.mnemonic);
  const searchMeta = {
    search_score: hit.score,
    search_normalized_score: hit.normalized,
    match_type: limit === 1 ? 'very_high' : hit.tier,
    algorithm: hit.bridge ? BRIDGE : LEXICAL,
    search_highlight: hit.highlight,
    search_confidence: null,
    // The bridging concept the row matched (what `search_highlight` speaks of), and how it maps.
    ...(hit.bridge
      ? {
          bridge: {
            url: conceptUrlOf(matched, hit.bridge.version.mnemonic),
            id: hit.bridge.version.mnemonic,
            display_name: hit.bridge.version.displayName,
            map_type: hit.bridge.mapType,
          },
        }
      : {}),
  };
  if (options.brief) {
    return { id: v.mnemonic, url, display_name: v.displayName, search_meta: searchMeta };
  }
  return {
    url,
    version_url: `${url}${v.id}/`,
    id: v.mnemonic,
    display_name: v.displayName,
    display_locale: v.displayLocale,
    retired: v.retired,
    concept_class: v.conceptClass,
    datatype: v.datatype,
    property: propertiesOf(v.extras),
    extras: v.extras,
    source: target.repo.mnemonic,
    owner: target.owner.id,
    owner_type: target.owner.type,
    owner_url: ownerUrl(target.owner),
    search_meta: searchMeta,
    ...(options.verbose
      ? {
          names: v.names,
          descriptions: v.descriptions,
          mappings: (mappings?.get(v.conceptId) ?? []).map((m) => ({
            id: m.mnemonic,
            map_type: m.mapType,
            to_source_url: m.toSourceUrl,
            to_concept_code: m.toConceptCode,
            to_concept_name: m.toConceptName,
            retired: m.retired,
          })),
        }
      : {}),
  };
}

function conceptUrlOf(source: RepoView, id: string): string {
  return `${repoUrl(source.owner, 'source', source.repo.mnemonic)}concepts/${encodeURIComponent(id)}/`;
}

/** Scalar custom attributes as FHIR-style properties (`code` and one typed value). */
function propertiesOf(extras: Record<string, unknown> | null): Array<Record<string, unknown>> {
  return Object.entries(extras ?? {}).flatMap(([code, value]): Array<Record<string, unknown>> => {
    if (typeof value === 'boolean') return [{ code, valueBoolean: value }];
    if (typeof value === 'number')
      return [
        Number.isInteger(value) ? { code, valueInteger: value } : { code, valueDecimal: value },
      ];
    if (typeof value === 'string') return [{ code, valueString: value }];
    return [];
  });
}
