import { CodeSystemModel } from './code-system';
import { CORE_CONTENT } from './core-content';
import type {
  CodeSystemConcept,
  CodeSystemResource,
  ConceptMapResource,
  ConceptSetComponent,
  TerminologyResource,
  ValueSetResource,
} from './fhir';

/**
 * Where stored content is found by canonical URL: repositories as FHIR resources, only those the
 * caller may see. Every version of the URL that exists.
 */
export interface StoredTerminology {
  codeSystems(url: string): Promise<CodeSystemResource[]>;
  /**
   * The same versions as definitions without concepts, each with a `ConceptReader`
   * (`withConceptReader`): what an operation on a few codes reads. Absent: `codeSystems`.
   */
  codeSystemDefinitions?(url: string): Promise<CodeSystemResource[]>;
  valueSets(url: string): Promise<ValueSetResource[]>;
  /**
   * The same value set versions as definitions without compose, each with its `StoredMembers`
   * (`withStoredMembers`): what an expansion paged in the database reads. Absent: none is.
   */
  valueSetDefinitions?(url: string): Promise<ValueSetResource[]>;
  conceptMaps(url: string): Promise<ConceptMapResource[]>;
}

/** Splits `url|version`. */
export function splitCanonical(canonical: string): { url: string; version?: string } {
  const bar = canonical.indexOf('|');
  return bar < 0
    ? { url: canonical }
    : { url: canonical.slice(0, bar), version: canonical.slice(bar + 1) || undefined };
}

/** Whether a requested version (exact, or with `x`/`*` wildcard segments) names `actual`. */
export function versionMatches(requested: string, actual: string | undefined): boolean {
  if (actual === undefined) return false;
  if (requested === actual) return true;
  if (!/(^|\.)[x*X](\.|$)/.test(requested)) return false;
  const want = requested.split('.');
  const have = actual.split('.');
  if (want.length > have.length) return false;
  return want.every((segment, i) => /^[x*X]$/.test(segment) || segment === have[i]);
}

/** A list of versions as messages give it: `a`, `a or b`, `a, b and c`. */
export function presentVersions(versions: string[]): string {
  if (versions.length <= 2) return versions.join(' or ');
  return `${versions.slice(0, -1).join(', ')} and ${versions[versions.length - 1]}`;
}

/** Orders versions: numeric segments numerically, others as text; later versions are greater. */
export function compareVersions(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  const as = a.split(/[.-]/);
  const bs = b.split(/[.-]/);
  for (let i = 0; i < Math.max(as.length, bs.length); i += 1) {
    const x = as[i];
    const y = bs[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    const order = Number.isNaN(nx) || Number.isNaN(ny) ? x.localeCompare(y) : Math.sign(nx - ny);
    if (order !== 0) return order;
  }
  return 0;
}

/** Reads some concepts of a stored code system version by code (see `StoredTerminology`). */
export type ConceptReader = (
  codes: string[],
  options: { caseless: boolean; ancestors: boolean; children: boolean },
) => Promise<CodeSystemConcept[]>;

const CONCEPT_READERS = new WeakMap<CodeSystemResource, ConceptReader>();

/** Marks a code system definition whose concepts `reader` reads by code. */
export function withConceptReader(
  definition: CodeSystemResource,
  reader: ConceptReader,
): CodeSystemResource {
  CONCEPT_READERS.set(definition, reader);
  return definition;
}

/** A stored source version a code system definition was read from (`seq` null: HEAD). */
export interface StoredSource {
  repositoryId: string;
  seq: string | null;
}

const STORED_SOURCES = new WeakMap<CodeSystemResource, StoredSource>();

/** Marks a code system definition as read from a stored source version. */
export function withStoredSource(
  definition: CodeSystemResource,
  source: StoredSource,
): CodeSystemResource {
  STORED_SOURCES.set(definition, source);
  return definition;
}

/** The stored source version a code system (definition, or one read from it) stands for. */
export function storedSourceOf(resource: CodeSystemResource): StoredSource | undefined {
  return STORED_SOURCES.get(resource);
}

/**
 * The members a stored value set version (a collection version) takes from one member source:
 * the include they make, without its concepts (system and version), and those it finds in a code
 * system version, in member order.
 */
export interface StoredMemberSource {
  include: ConceptSetComponent;
  /** How many members the code system version `source` has a concept for (as `read` takes). */
  count(source: StoredSource, read: MemberRead): Promise<number>;
  /** Those concepts, `offset` on, at most `limit` (all without), in member order. */
  page(
    source: StoredSource,
    read: MemberRead,
    offset: number,
    limit?: number,
  ): Promise<CodeSystemConcept[]>;
  /**
   * The texts of those concepts (as `read` takes) that may match a filter: every one whose
   * code, display and names hold each of `needles` (`filterNeedles`), and maybe more, in member
   * order.
   */
  texts(source: StoredSource, read: MemberRead, needles: string[]): Promise<MemberTexts[]>;
  /** Concepts of the code system version `source` by their ids (`MemberTexts.id`), in order. */
  byIds(source: StoredSource, read: MemberRead, ids: string[]): Promise<CodeSystemConcept[]>;
}

/**
 * A member's concept as `filter` text is matched against it (`textMatcher`): its code, display
 * and names, with the id it is read by whole.
 */
export interface MemberTexts {
  id: string;
  code: string;
  display?: string;
  names: string[];
}

/** Which members a read of a member source takes, and what it reads of each. */
export interface MemberRead {
  /** Only those whose concept is active in the code system version (`$expand`'s `activeOnly`). */
  activeOnly?: boolean;
  /** Each concept with its `child` properties (the codes of the concepts naming it a parent). */
  children?: boolean;
  /**
   * Each concept with its names and descriptions (designations, definition); without, its code,
   * display and status properties only.
   */
  texts?: boolean;
}

/** The members of a stored value set version, read a page at a time or by code. */
export interface StoredMembers {
  /**
   * A member source for each include the members make (`includesOf`: one per member source
   * with active members), in the order the whole value set has its includes.
   */
  sources(): Promise<StoredMemberSource[]>;
  /**
   * The includes the members make, each listing only its members among `codes`, or, where none
   * is, one member standing for the rest: the includes of the whole value set as far as those
   * codes can tell.
   */
  includesAmong(codes: string[]): Promise<ConceptSetComponent[]>;
}

const STORED_MEMBERS = new WeakMap<ValueSetResource, StoredMembers>();

/** Marks a value set definition whose members `members` reads. */
export function withStoredMembers(
  definition: ValueSetResource,
  members: StoredMembers,
): ValueSetResource {
  STORED_MEMBERS.set(definition, members);
  return definition;
}

export function storedMembersOf(definition: ValueSetResource): StoredMembers | undefined {
  return STORED_MEMBERS.get(definition);
}

/**
 * The codes an operation on a few codes asks about (`$lookup`, CodeSystem `$validate-code`,
 * `$subsumes`): stored code systems are then read as definitions with only these concepts (and,
 * with `ancestors`, every concept above them), never whole.
 */
export interface CodeFocus {
  codes: string[];
  ancestors: boolean;
  /** Their children's codes too (`$lookup`'s `child` property). */
  children: boolean;
}

/**
 * The index of each code system resource, built once per resource object: a request's own
 * resources live as long as the request, stored ones as long as they stay cached (the models only
 * read the resource, and nothing changes a model once built).
 */
const MODELS = new WeakMap<CodeSystemResource, CodeSystemModel>();

/**
 * The terminology content one request works with: the `tx-resource` resources it brought (used
 * for that request only, before stored content of the same URL and version) and the stored
 * repositories the caller may see. Answers are cached for the request.
 */
export class TerminologyLibrary {
  private readonly local: TerminologyResource[] = [];
  private readonly cache = new Map<string, Promise<TerminologyResource[]>>();
  /** Stored code system definitions with the focus's concepts read in, per definition. */
  private readonly focused = new Map<CodeSystemResource, Promise<CodeSystemResource>>();

  constructor(
    private readonly stored?: StoredTerminology,
    resources: TerminologyResource[] = [],
    /** Set: stored code systems are read by these codes only (see `CodeFocus`). */
    private readonly focus?: CodeFocus,
  ) {
    this.local.push(...resources);
  }

  /**
   * The same content read with another focus: the versions this library has found by URL are
   * not searched for again (what they are does not depend on the focus, only which of their
   * concepts are read).
   */
  refocused(focus: CodeFocus): TerminologyLibrary {
    const library = new TerminologyLibrary(this.stored, this.local, focus);
    for (const [key, found] of this.cache) library.cache.set(key, found);
    return library;
  }

  /** Every version of a code system, tx-resources first. */
  async codeSystemVersions(url: string): Promise<CodeSystemResource[]> {
    return (await this.all('CodeSystem', url)) as CodeSystemResource[];
  }

  async valueSetVersions(url: string): Promise<ValueSetResource[]> {
    return (await this.all('ValueSet', url)) as ValueSetResource[];
  }

  async conceptMapVersions(url: string): Promise<ConceptMapResource[]> {
    return (await this.all('ConceptMap', url)) as ConceptMapResource[];
  }

  /** The versions of a code system that exist, in order (as messages list them). */
  async knownVersions(url: string): Promise<string[]> {
    const versions = (await this.codeSystemVersions(url))
      .map((r) => r.version)
      .filter((v): v is string => v !== undefined);
    return [...new Set(versions)].sort();
  }

  /** One of the request's own resources by its id. */
  localById(type: string, id: string): TerminologyResource | undefined {
    return this.local.find((r) => r.resourceType === type && r.id === id);
  }

  /** Concept maps among the request's own resources (searched by source and target). */
  localConceptMaps(): ConceptMapResource[] {
    return this.local.filter((r): r is ConceptMapResource => r.resourceType === 'ConceptMap');
  }

  /** A code system version: the one named (exactly or by wildcard), else the latest. */
  async codeSystem(url: string, version?: string): Promise<CodeSystemModel | undefined> {
    const found = pick(await this.codeSystemVersions(url), version);
    return found && this.modelOf(await this.withConcepts(found));
  }

  async valueSet(url: string, version?: string): Promise<ValueSetResource | undefined> {
    return pick(await this.valueSetVersions(url), version);
  }

  /**
   * A stored value set version as a definition with its `StoredMembers` (see
   * `StoredTerminology.valueSetDefinitions`), picked as `valueSet` picks; none when the request
   * brought resources, or the FHIR core has the URL too (its content would be merged in).
   */
  async storedValueSetDefinition(
    url: string,
    version?: string,
  ): Promise<ValueSetResource | undefined> {
    if (!this.stored?.valueSetDefinitions || this.local.length > 0) return undefined;
    if (CORE_CONTENT.some((r) => r.resourceType === 'ValueSet' && r.url === url)) return undefined;
    return pick(await this.stored.valueSetDefinitions(url), version);
  }

  async conceptMap(url: string, version?: string): Promise<ConceptMapResource | undefined> {
    return pick(await this.conceptMapVersions(url), version);
  }

  /** The supplements of a code system among the request's resources and stored ones. */
  async supplement(canonical: string): Promise<CodeSystemResource | undefined> {
    const { url, version } = splitCanonical(canonical);
    const found = pick(await this.codeSystemVersions(url), version);
    return found && this.withConcepts(found);
  }

  /** A stored definition with the focus's concepts read in; any other resource as it is. */
  private withConcepts(resource: CodeSystemResource): Promise<CodeSystemResource> {
    const reader = CONCEPT_READERS.get(resource);
    if (!reader) return Promise.resolve(resource);
    let found = this.focused.get(resource);
    if (!found) {
      found = (async () => {
        const copy: CodeSystemResource = {
          ...resource,
          concept: await reader(this.focus?.codes ?? [], {
            caseless: resource.caseSensitive === false,
            ancestors: this.focus?.ancestors ?? false,
            children: this.focus?.children ?? false,
          }),
        };
        // Released or not, as the definition it was read from, and from the same source version.
        if (UNRELEASED_STORED.has(resource)) UNRELEASED_STORED.add(copy);
        const source = STORED_SOURCES.get(resource);
        if (source) STORED_SOURCES.set(copy, source);
        return copy;
      })();
      this.focused.set(resource, found);
    }
    return found;
  }

  modelOf(resource: CodeSystemResource): CodeSystemModel {
    let model = MODELS.get(resource);
    if (!model) {
      model = new CodeSystemModel(resource);
      MODELS.set(resource, model);
    }
    return model;
  }

  private all(type: string, url: string): Promise<TerminologyResource[]> {
    const key = `${type} ${url}`;
    let found = this.cache.get(key);
    if (!found) {
      found = (async () => {
        const named = (r: TerminologyResource) => r.resourceType === type && r.url === url;
        const local = this.local.filter(named);
        const stored: TerminologyResource[] = !this.stored
          ? []
          : type === 'CodeSystem'
            ? this.focus && this.stored.codeSystemDefinitions
              ? await this.stored.codeSystemDefinitions(url)
              : await this.stored.codeSystems(url)
            : type === 'ValueSet'
              ? await this.stored.valueSets(url)
              : await this.stored.conceptMaps(url);
        // A version is the request's own, else stored content's, else the FHIR core's.
        const found = [...local];
        for (const more of [stored, CORE_CONTENT.filter(named)]) {
          const versions = new Set(found.map((r) => r.version));
          found.push(...more.filter((r) => !versions.has(r.version)));
        }
        return found;
      })();
      this.cache.set(key, found);
    }
    return found;
  }
}

/**
 * Stored versions that are not released (drafts and HEAD): a version-less request passes them
 * over while a released version of the same URL exists (spec ops §2.8, §9.1).
 */
const UNRELEASED_STORED = new WeakSet<TerminologyResource>();

/** Marks stored versions (from `StoredTerminology`) that are not released. */
export function markUnreleased<T extends TerminologyResource>(resources: T[]): T[] {
  for (const resource of resources) {
    if (resource.status === 'draft') UNRELEASED_STORED.add(resource);
  }
  return resources;
}

function pick<T extends TerminologyResource>(candidates: T[], version?: string): T | undefined {
  if (version !== undefined) {
    const exact = candidates.find((r) => r.version === version);
    if (exact) return exact;
    return latest(candidates.filter((r) => versionMatches(version, r.version)));
  }
  // The newest released version; a repository with none released is read at its newest one
  // (HEAD when it has no other), so a working copy can be looked up too.
  const released = candidates.filter((r) => !UNRELEASED_STORED.has(r));
  return latest(released.length > 0 ? released : candidates);
}

export function latest<T extends TerminologyResource>(candidates: T[]): T | undefined {
  let best: T | undefined;
  for (const candidate of candidates) {
    if (!best || compareVersions(candidate.version, best.version) > 0) best = candidate;
  }
  return best;
}
