import { HEAD, type RepositoryVersionEntity, type UrlRegistryEntryEntity } from '../../db/entities';
import { AppError, isAppError } from '../../errors';
import type { OwnerKey, Repositories } from '../../repositories';
import { mayViewRepo } from '../shared/paths';
import type { ServiceContext } from '../shared/context';
import { contextOn } from '../shared/context';
import { PathResolver } from '../shared/paths';
import type { Owner, RepoView } from '../content/repository.service';
import { ownerUrl, parseOwnerUrl, parseRepoUrl, type OwnerRef, type RepoRef } from '../shared/urls';

/** A reference in its expanded form (spec operations §2.4); other fields are ignored here. */
export interface ReferenceInput {
  url: string;
  version?: string | null;
  namespace?: string | null;
}

/** What one reference resolved to (spec operations §2.5). */
export interface Resolution {
  referenceType: 'relative' | 'canonical';
  resolved: boolean;
  /** The reference as given. */
  request: unknown;
  /** The cleaned repository URL: no concept path, no parameters, no `|version`. */
  resolutionUrl: string | null;
  /** Relative URL of the registry entry used, or null. */
  registryEntryUrl: string | null;
  /** The repository at the version it resolved to. */
  repo: RepoView | null;
}

/** A reference taken apart: what decides its resolution (and so its key in a batch). */
type Parsed =
  | {
      kind: 'relative';
      resolutionUrl: string | null;
      ref: RepoRef | null;
      version?: string;
    }
  | {
      kind: 'canonical';
      resolutionUrl: string;
      version?: string;
      /** null = the global namespace; `invalid` = a namespace that names no owner. */
      namespace: OwnerRef | null | 'invalid';
    };

interface Outcome {
  repo: RepoView | null;
  registryEntryUrl: string | null;
}

/** Per-batch memo of the lookups many references share (owners of namespaces). */
type Memo = Map<string, Promise<Owner | null>>;

/**
 * Where a resolution reads: the caller's context, and the repositories and path resolver of the
 * pool or of one open transaction (whose context's loaders read on its connection too).
 */
interface Scope {
  ctx: ServiceContext;
  repos: Repositories;
  paths: PathResolver;
}

/** Path segments after a repository (or its version) that are not a version id. */
const SUB_RESOURCES = new Set([
  'concepts',
  'mappings',
  'references',
  'expansions',
  'extras',
  'versions',
  'export',
  'summary',
]);
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const MAX_REFERENCES = 10_000;
/** How many distinct references of a batch are resolved at the same time. */
const CONCURRENCY = 8;

/**
 * Reference resolution (spec operations §4.4): turns relative and canonical repository references
 * into repository versions, through the owner and global canonical URL registries. Collection
 * references, mapping ends and `$resolveReference` all resolve through this one class. What the
 * caller may not see is unresolved, never an error.
 */
export class ReferenceResolver {
  private readonly paths: PathResolver;

  constructor(private readonly repos: Repositories) {
    this.paths = new PathResolver(repos);
  }

  /** One reference; `namespace` (an owner URL, or null/`/` for global) unless the reference names one. */
  async resolve(
    ctx: ServiceContext,
    ref: string | ReferenceInput,
    namespace?: string | null,
  ): Promise<Resolution> {
    return (await this.resolveMany(ctx, [ref], namespace))[0];
  }

  /**
   * Many references, in order; each distinct (url, version, namespace) is resolved once. With
   * `within` (the repositories an open transaction's work received), every statement runs on
   * that transaction's connection: a write resolves what it needs under its own locks.
   */
  async resolveMany(
    ctx: ServiceContext,
    refs: Array<string | ReferenceInput>,
    namespace?: string | null,
    within?: Repositories,
  ): Promise<Resolution[]> {
    const scope = this.scopeOf(ctx, within);
    const fallback = namespaceOf(namespace);
    const parsed = refs.map((ref) => parse(ref, fallback));
    const keys = parsed.map(batchKeyOf);
    const distinct = new Map<string, Parsed>();
    parsed.forEach((p, i) => distinct.set(keys[i], p));
    const memo: Memo = new Map();
    const outcomes = new Map<string, Outcome>();
    const queue = [...distinct.entries()];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        outcomes.set(next[0], await this.outcomeOf(scope, next[1], memo));
      }
    };
    // One transaction has one connection: its statements go one after another anyway.
    const workers = Math.min(within ? 1 : CONCURRENCY, queue.length);
    await Promise.all(Array.from({ length: workers }, worker));
    return parsed.map((p, i) => {
      const outcome = outcomes.get(keys[i])!;
      return {
        referenceType: p.kind,
        resolved: outcome.repo !== null,
        request: refs[i],
        resolutionUrl: p.resolutionUrl,
        registryEntryUrl: outcome.registryEntryUrl,
        repo: outcome.repo,
      };
    });
  }

  /**
   * `$resolveReference` input (spec operations §4.4): a reference or a list of them, checked
   * strictly (400 for a malformed body or namespace), then resolved. `many` tells a list from
   * a single reference, which answers one result.
   */
  async resolveRequest(
    ctx: ServiceContext,
    body: unknown,
    namespace?: string | null,
  ): Promise<{ many: boolean; results: Resolution[] }> {
    if (namespace !== undefined && namespace !== null) checkNamespace(namespace, 'namespace');
    const many = Array.isArray(body);
    const refs: unknown[] = many ? body : [body];
    if (refs.length > MAX_REFERENCES) {
      throw AppError.invalid(`At most ${MAX_REFERENCES} references in one request.`);
    }
    refs.forEach((ref, i) => checkReference(ref, many ? `[${i}]` : ''));
    return {
      many,
      results: await this.resolveMany(ctx, refs as Array<string | ReferenceInput>, namespace),
    };
  }

  /**
   * The registry lookup of `$lookup` (spec operations §4.6): the entry for the URL in the owner's
   * registry, else in the global one (owner entries override global ones), resolved in the entry's
   * namespace to the repository (at HEAD). Null when no entry or no visible repository.
   */
  async lookup(
    ctx: ServiceContext,
    registryOwner: Owner | null,
    url: string,
  ): Promise<{ repo: RepoView | null; registryEntryUrl: string | null }> {
    const entry =
      (registryOwner && (await this.repos.urlRegistry.findByUrl(ownerKeyOf(registryOwner), url))) ||
      (await this.repos.urlRegistry.findByUrl(null, url));
    if (!entry) return { repo: null, registryEntryUrl: null };
    const owner = entry.ownerOrgId || entry.ownerUserId ? registryOwner : null;
    return this.viaEntry(this.scopeOf(ctx), entry, owner, HEAD, new Map());
  }

  /** The pool's scope, or an open transaction's (its own loaders on its own connection). */
  private scopeOf(ctx: ServiceContext, within?: Repositories): Scope {
    if (!within) return { ctx, repos: this.repos, paths: this.paths };
    return { ctx: contextOn(ctx, within), repos: within, paths: new PathResolver(within) };
  }

  private async outcomeOf(scope: Scope, parsed: Parsed, memo: Memo): Promise<Outcome> {
    if (parsed.kind === 'relative') {
      if (!parsed.ref) return { repo: null, registryEntryUrl: null };
      const repo = await hidden(() =>
        scope.paths.repository(scope.ctx, { ...parsed.ref!, version: parsed.version }),
      );
      return { repo, registryEntryUrl: null };
    }
    return this.canonical(scope, parsed.resolutionUrl, parsed.version, parsed.namespace, memo);
  }

  /** spec operations §4.4, in order: owner registry, owner repositories, global registry. */
  private async canonical(
    scope: Scope,
    url: string,
    version: string | undefined,
    namespace: OwnerRef | null | 'invalid',
    memo: Memo,
  ): Promise<Outcome> {
    if (namespace === 'invalid') return { repo: null, registryEntryUrl: null };
    // A namespace that does not exist or that the caller may not see is no namespace at all.
    const owner = namespace ? await this.owner(scope, namespace, memo) : null;
    if (owner) {
      const entry = await scope.repos.urlRegistry.findByUrl(ownerKeyOf(owner), url);
      if (entry) return this.viaEntry(scope, entry, owner, version, memo);
      const repo = await this.firstVisible(scope, owner, url);
      if (repo) return { repo: await this.atVersion(scope, repo, version), registryEntryUrl: null };
    }
    const global = await scope.repos.urlRegistry.findByUrl(null, url);
    if (global) return this.viaEntry(scope, global, null, version, memo);
    return { repo: null, registryEntryUrl: null };
  }

  /** An entry resolves to the repository in its own namespace registered under its URL. */
  private async viaEntry(
    scope: Scope,
    entry: UrlRegistryEntryEntity,
    registryOwner: Owner | null,
    version: string | undefined,
    memo: Memo,
  ): Promise<Outcome> {
    const registryEntryUrl = `${registryOwner ? ownerUrl(registryOwner) : '/'}url-registry/${entry.id}/`;
    let namespace: OwnerRef | null = null;
    try {
      namespace = entry.namespace ? parseOwnerUrl(entry.namespace) : null;
    } catch {
      namespace = null;
    }
    const owner = namespace ? await this.owner(scope, namespace, memo) : null;
    const repo = owner ? await this.firstVisible(scope, owner, entry.url) : null;
    return { repo: repo ? await this.atVersion(scope, repo, version) : null, registryEntryUrl };
  }

  /** The owner a namespace names, if it exists and the caller may see it. */
  private owner(scope: Scope, ref: OwnerRef, memo: Memo): Promise<Owner | null> {
    const key =
      ref.type === 'org' ? `org:${ref.id}` : ref.type === 'user' ? `user:${ref.username}` : 'self';
    let found = memo.get(key);
    if (!found) {
      found = hidden(() => scope.paths.owner(scope.ctx, ref));
      memo.set(key, found);
    }
    return found;
  }

  /** The first repository of the owner under the canonical URL that the caller may see, at HEAD. */
  private async firstVisible(scope: Scope, owner: Owner, url: string): Promise<RepoView | null> {
    const { ctx } = scope;
    for (const repo of await scope.repos.urlRegistry.reposWithCanonicalUrl(
      ownerKeyOf(owner),
      url,
    )) {
      if (await mayViewRepo(ctx, repo)) {
        const head = await ctx.loaders.headVersion.load(repo.id);
        if (head) return { repo, owner, version: head };
      }
    }
    return null;
  }

  /**
   * The version a reference asks for: an id, `HEAD`, `latest` (newest released); without one, a
   * canonical URL means the newest released version, else HEAD (as OCL resolves it).
   */
  private async atVersion(
    { repos }: Scope,
    view: RepoView,
    version: string | undefined,
  ): Promise<RepoView | null> {
    let found: RepositoryVersionEntity | null;
    if (version === undefined) {
      found = (await repos.repos.latestReleased(view.repo.id)) ?? view.version;
    } else if (version === 'latest') {
      found = await repos.repos.latestReleased(view.repo.id);
    } else if (version === HEAD) {
      found = view.version;
    } else {
      found = await repos.repos.findVersion(view.repo.id, version);
    }
    return found ? { ...view, version: found } : null;
  }
}

/** Runs a lookup; what does not exist or may not be seen becomes null (spec operations §4.4). */
async function hidden<T>(work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (error) {
    if (
      isAppError(error) &&
      ['NOT_FOUND', 'FORBIDDEN', 'UNAUTHENTICATED', 'INVALID'].includes(error.code)
    ) {
      return null;
    }
    throw error;
  }
}

function ownerKeyOf(owner: Owner): OwnerKey {
  return owner.org ? { orgId: owner.org.id } : { userId: owner.user!.id };
}

/** `/`, empty or absent: the global namespace; otherwise an owner URL. */
function namespaceOf(value: string | null | undefined): OwnerRef | null | 'invalid' {
  const text = value?.trim();
  if (!text || text === '/') return null;
  try {
    return parseOwnerUrl(text);
  } catch {
    return 'invalid';
  }
}

function parse(ref: string | ReferenceInput, fallback: OwnerRef | null | 'invalid'): Parsed {
  const object = typeof ref === 'object' && ref !== null ? ref : null;
  const raw = (object ? object.url : ref) ?? '';
  const url = typeof raw === 'string' ? raw.trim() : '';
  const given =
    object && typeof object.version === 'string' && object.version.trim()
      ? object.version.trim()
      : undefined;
  if (SCHEME.test(url) && !url.startsWith('/')) {
    // spec operations §2.4: `url|version`; as in OCL, the piped version wins and parameters go.
    const [base, piped] = splitOnce(url, '|');
    const version = piped?.trim() ? piped.trim() : given;
    const namespace =
      object && typeof object.namespace === 'string' && object.namespace.trim()
        ? namespaceOf(object.namespace)
        : fallback;
    return { kind: 'canonical', resolutionUrl: withoutQuery(base), version, namespace };
  }
  return relative(withoutQuery(url), given);
}

/**
 * `/orgs/O/sources/S/[v1/][concepts/C/…]`: the repository and the version its path names (which
 * wins over a `version` field, as a piped version does).
 */
function relative(path: string, given: string | undefined): Parsed {
  const segments = path.split('/').filter(Boolean);
  const ownerLength = segments[0] === 'user' ? 1 : 2;
  const repoLength = ownerLength + 2;
  if (segments.length < repoLength) {
    return { kind: 'relative', resolutionUrl: path || null, ref: null };
  }
  const repoPath = `/${segments.slice(0, repoLength).join('/')}/`;
  const next = segments[repoLength];
  const inPath =
    next !== undefined && !SUB_RESOURCES.has(next) && !next.startsWith('$') ? next : undefined;
  try {
    const ref = parseRepoUrl(repoPath);
    const version = inPath !== undefined ? decodeURIComponent(inPath) : given;
    return {
      kind: 'relative',
      resolutionUrl: repoPath,
      ref: { ...ref, version: undefined },
      version,
    };
  } catch {
    return { kind: 'relative', resolutionUrl: repoPath, ref: null };
  }
}

function batchKeyOf(parsed: Parsed): string {
  if (parsed.kind === 'relative') {
    return `r|${parsed.ref ? parsed.resolutionUrl : ''}|${parsed.version ?? ''}`;
  }
  const ns = parsed.namespace;
  const namespace =
    ns === null
      ? '/'
      : ns === 'invalid'
        ? '!'
        : ns.type === 'org'
          ? `o:${ns.id}`
          : ns.type === 'user'
            ? `u:${ns.username}`
            : 'self';
  return `c|${parsed.resolutionUrl}|${parsed.version ?? ''}|${namespace}`;
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

function withoutQuery(url: string): string {
  return url.split(/[?#]/)[0];
}

function checkNamespace(value: unknown, field: string): void {
  if (value === null || value === undefined) return;
  if (typeof value !== 'string') throw AppError.field(field, 'Must be a string.');
  if (namespaceOf(value) === 'invalid') {
    throw AppError.field(
      field,
      `'${value}' is not a namespace: use / (global) or an owner URL like /orgs/:org/ or /users/:user/.`,
    );
  }
}

/** A string, or an object with a `url` string and optional `version` and `namespace` strings. */
function checkReference(ref: unknown, at: string): void {
  const where = at ? `Reference ${at}` : 'The reference';
  if (typeof ref === 'string') {
    if (!ref.trim()) throw AppError.field(`${at}url`, `${where} is empty.`);
    return;
  }
  if (typeof ref !== 'object' || ref === null || Array.isArray(ref)) {
    throw AppError.invalid(
      `${where} must be a URL string or an object with a url; send one reference or a list of them.`,
    );
  }
  const { url, version, namespace } = ref as Record<string, unknown>;
  if (typeof url !== 'string' || !url.trim()) {
    throw AppError.field(`${at}url`, `${where} needs a url (a string).`);
  }
  if (version !== undefined && version !== null && typeof version !== 'string') {
    throw AppError.field(`${at}version`, `${where}: version must be a string.`);
  }
  checkNamespace(namespace, `${at}namespace`);
}
