import type { RepositoryKind } from '../../db/entities';
import { AppError } from '../../errors';

/** An owner as written in the API: `/orgs/:org/`, `/users/:user/` or `/user/` (the caller). */
export type OwnerRef =
  { type: 'org'; id: string } | { type: 'user'; username: string } | { type: 'self' };

/** A source or collection, at HEAD (no version), `latest`, or a version id. */
export interface RepoRef {
  owner: OwnerRef;
  kind: RepositoryKind;
  id: string;
  version?: string;
}

const OWNER = /^\/(?:orgs\/([^/]+)|users\/([^/]+)|(user))\//;
const KIND: Record<string, RepositoryKind> = { sources: 'source', collections: 'collection' };

/** `/orgs/CIEL/` → an owner reference; anything else is a 400. */
export function parseOwnerUrl(url: string): OwnerRef {
  const normalized = withSlashes(url);
  const match = OWNER.exec(normalized);
  if (!match || match[0] !== normalized) {
    throw AppError.field(
      'owner',
      `'${url}' is not an owner URL like /orgs/:org/ or /users/:user/.`,
    );
  }
  return ownerOf(match);
}

/**
 * `/orgs/CIEL/sources/CIEL/[v1/]` → a repository reference (a version segment of `HEAD`,
 * `latest` or an id). The URL of a collection reads `/collections/`.
 */
export function parseRepoUrl(url: string, kind?: RepositoryKind): RepoRef {
  const normalized = withSlashes(url);
  const owner = OWNER.exec(normalized);
  const rest = owner ? normalized.slice(owner[0].length).split('/').filter(Boolean) : [];
  const parsedKind = KIND[rest[0] ?? ''];
  if (
    !owner ||
    !parsedKind ||
    rest.length < 2 ||
    rest.length > 3 ||
    (kind && parsedKind !== kind)
  ) {
    const example =
      kind === 'collection' ? '/orgs/:org/collections/:collection/' : '/orgs/:org/sources/:source/';
    throw AppError.field('url', `'${url}' is not a repository URL like ${example}.`);
  }
  return {
    owner: ownerOf(owner),
    kind: parsedKind,
    id: decodeURIComponent(rest[1]),
    version: rest[2] === undefined ? undefined : decodeURIComponent(rest[2]),
  };
}

/** A concept: at HEAD, as of a source version, or one of its own versions. */
export interface ConceptRef {
  source: RepoRef;
  id: string;
  conceptVersion?: string;
}

/** `org:source:concept`, `org:source[sourceVersion]:concept`, `org:source:concept[conceptVersion]`. */
const SHORTHAND =
  /^([^:[\]/\s]+):([^:[\]/\s]+)(?:\[([^\]/\s]+)\])?:([^:[\]/\s]+)(?:\[([^\]/\s]+)\])?$/;

/**
 * A concept reference from its text forms (spec core §2.6): a REST URL —
 * `/orgs/O/sources/S/concepts/C/`, `/orgs/O/sources/S/v1/concepts/C/` (as of a source version),
 * `/orgs/O/sources/S/concepts/C/123/` (a concept version) — or the shorthand
 * `org:source:concept`, `org:source[v1]:concept`, `org:source:concept[123]` (the owner is an org).
 */
export function parseConceptUrl(url: string): ConceptRef {
  const shorthand = SHORTHAND.exec(url.trim());
  if (shorthand) {
    const [, org, source, sourceVersion, concept, conceptVersion] = shorthand;
    if (sourceVersion !== undefined && conceptVersion !== undefined) {
      throw AppError.field(
        'url',
        `'${url}' names both a source version and a concept version; name one.`,
      );
    }
    return {
      source: {
        owner: { type: 'org', id: org },
        kind: 'source',
        id: source,
        version: sourceVersion,
      },
      id: concept,
      conceptVersion,
    };
  }
  return parseContentUrl(url, 'concepts');
}

/** A mapping: at HEAD, as of a source version, or one of its own versions. */
export interface MappingRef {
  source: RepoRef;
  id: string;
  mappingVersion?: string;
}

/** `/orgs/O/sources/S/[v1/]mappings/M/[123/]` → a mapping reference. */
export function parseMappingUrl(url: string): MappingRef {
  const { source, id, conceptVersion } = parseContentUrl(url, 'mappings');
  return { source, id, mappingVersion: conceptVersion };
}

/** The URL forms shared by concepts and mappings: `{source}[/:version]/{segment}/:id/[:version/]`. */
function parseContentUrl(url: string, segment: 'concepts' | 'mappings'): ConceptRef {
  const normalized = withSlashes(url);
  const marker = `/${segment}/`;
  const at = normalized.indexOf(marker);
  const rest =
    at < 0
      ? []
      : normalized
          .slice(at + marker.length)
          .split('/')
          .filter(Boolean);
  if (at < 0 || rest.length < 1 || rest.length > 2) {
    throw AppError.field(
      'url',
      `'${url}' is not a URL like /orgs/:org/sources/:source/${segment}/:id/.`,
    );
  }
  return {
    source: parseRepoUrl(normalized.slice(0, at + 1), 'source'),
    id: decodeURIComponent(rest[0]),
    conceptVersion: rest[1] === undefined ? undefined : decodeURIComponent(rest[1]),
  };
}

export function ownerUrl(owner: { type: 'Organization' | 'User'; id: string }): string {
  return owner.type === 'Organization'
    ? `/orgs/${encodeURIComponent(owner.id)}/`
    : `/users/${encodeURIComponent(owner.id)}/`;
}

export function repoUrl(
  owner: { type: 'Organization' | 'User'; id: string },
  kind: RepositoryKind,
  id: string,
  version?: string,
): string {
  const base = `${ownerUrl(owner)}${kind === 'source' ? 'sources' : 'collections'}/${encodeURIComponent(id)}/`;
  return version === undefined ? base : `${base}${encodeURIComponent(version)}/`;
}

function ownerOf(match: RegExpExecArray): OwnerRef {
  if (match[1]) return { type: 'org', id: decodeURIComponent(match[1]) };
  if (match[2]) return { type: 'user', username: decodeURIComponent(match[2]) };
  return { type: 'self' };
}

function withSlashes(url: string): string {
  const trimmed = url.trim();
  const path = trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
  return path.endsWith('/') ? path : `${path}/`;
}
