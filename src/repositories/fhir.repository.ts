import type { EntityManager } from 'typeorm';
import {
  ConceptVersionEntity,
  RepositoryEntity,
  RepositoryVersionEntity,
  type RepositoryKind,
} from '../db/entities';
import { preparedQuery } from './prepared';
import { hydrate, jsonColumns, type Raw } from './hydrate';
import { likeLiteral, visibleRepository, type Slice, type Viewer, type Window } from './list';

/** A repository named by its owner and id. */
export interface RepoName {
  ownerType: 'org' | 'user';
  owner: string;
  mnemonic: string;
}

/**
 * Which versions of each repository a FHIR search answers: the newest released one, every
 * released one, the one of that id (HEAD included), or what the terminology operations read
 * (every version but HEAD; HEAD when there is no other).
 */
export type VersionChoice =
  | { kind: 'latest' }
  | { kind: 'released' }
  | { kind: 'named'; version: string }
  | { kind: 'stored' };

/** A FHIR search over sources or collections (spec operations §4.7); conditions AND. */
export interface FhirRepoSearch {
  kind: RepositoryKind;
  versions: VersionChoice;
  owner?: { orgId: string } | { userId: string };
  /** Any of these repositories (`_id`). */
  names?: RepoName[];
  /**
   * `url`: the canonical URL the version froze is one of `canonical`, or the repository is one of
   * `repos` (its own URL was given).
   */
  url?: { canonical: string[]; repos: RepoName[] };
  /** Case- and accent-insensitive prefixes of the name and the full name the version froze. */
  name?: string;
  title?: string;
  status?: 'active' | 'draft' | 'retired';
}

/** A repository version found, with its owner's id as paths name it. */
export interface FhirRepoRow {
  repo: RepositoryEntity;
  version: RepositoryVersionEntity;
  ownerType: 'Organization' | 'User';
  ownerId: string;
}

interface RowRaw {
  repo: Raw;
  version: Raw;
  owner_org: string | null;
  owner_user: string | null;
}

/** The metadata field a version froze, or HEAD's live column. */
const frozen = (field: string, column: string): string =>
  `(CASE WHEN v.metadata IS NULL THEN r.${column} ELSE v.metadata->>'${field}' END)`;

/**
 * Whether the version `alias` (of a concept or mapping) is one a source version sees: the one
 * current at change `seq` (a parameter, `$n`), or at HEAD (null).
 */
function versionAt(alias: string, seq: string | null): string {
  return seq === null
    ? `${alias}.valid_to_seq IS NULL`
    : `${alias}.valid_from_seq <= ${seq} AND (${alias}.valid_to_seq IS NULL OR ${alias}.valid_to_seq > ${seq})`;
}

/**
 * The codes of the concepts naming the concept version `alias` as a parent, in code order, as
 * the source version (`repository` and `seq`: parameters, `$n`; seq null = HEAD) sees them.
 */
function childCodesOf(alias: string, repository: string, seq: string | null): string {
  return `(SELECT coalesce(array_agg(ch.mnemonic ORDER BY ch.mnemonic), '{}'::text[])
    FROM concept_versions ch
    WHERE ch.repository_id = ${repository} AND ch.parent_codes && ARRAY[${alias}.mnemonic]
      AND ${versionAt('ch', seq)})`;
}

/** Which members of an expansion a member read takes, and what it reads of each. */
export interface MemberRead {
  /** Only those whose concept in the source version is not retired (`$expand`'s `activeOnly`). */
  activeOnly?: boolean;
  /** With the codes of each concept's children (as `childCodes`), for its `child` property. */
  children?: boolean;
  /**
   * With each concept's names and descriptions (its designations, a display in another language,
   * its definition).
   */
  texts?: boolean;
}

/** Columns a member read never shows (`jsonColumns`' `instead`): read as empty. */
const UNSHOWN_COLUMNS = {
  extras: 'NULL',
  external_id: 'NULL',
  checksum_standard: 'NULL',
  checksum_smart: 'NULL',
  update_comment: 'NULL',
};
const UNSHOWN_AND_TEXTS = { ...UNSHOWN_COLUMNS, names: `'[]'::json`, descriptions: `'[]'::json` };

/**
 * What a member read takes of each concept version (`jsonColumns`): what an expansion can show
 * (code, display, status, class, datatype, parents, and with `read.texts` the names and
 * descriptions); extras, checksums and comments are read as empty. Without the texts a
 * 10,000-member page of CIEL-like concepts is a tenth of the bytes to build, send, parse and
 * collect.
 */
function memberColumns(read: MemberRead): Record<string, string> {
  return read.texts ? UNSHOWN_COLUMNS : UNSHOWN_AND_TEXTS;
}

/**
 * The active members of an expansion from one member repository (their versions as
 * `ConceptRepository.memberCodes` reads them), each with the concept of its code in a source
 * version (`sv`); members it has none for are left out, and with `activeOnly` those whose
 * concept there is retired.
 */
function memberConceptsSql(
  expansionId: string,
  memberRepositoryId: string,
  source: { repositoryId: string; seq: string | null },
  read: MemberRead,
): { sql: string; params: unknown[] } {
  const seq = source.seq === null ? null : '$4';
  const params: unknown[] = [expansionId, memberRepositoryId, source.repositoryId];
  if (source.seq !== null) params.push(source.seq);
  // A member of the source itself is that concept (codes are unique in a repository): no
  // lookup of its code.
  const own = memberRepositoryId === source.repositoryId;
  return {
    sql: `FROM expansion_concepts x
       ${memberVersionOf('x')}
       ${own ? '' : 'JOIN concepts c ON c.repository_id = $3 AND c.mnemonic = m.mnemonic'}
       JOIN concept_versions sv
         ON sv.concept_id = ${own ? 'x.concept_id AND sv.repository_id = $3' : 'c.id'}
         AND ${versionAt('sv', seq)}
       WHERE x.expansion_id = $1 AND x.repository_id = $2 AND NOT m.retired
         ${read.activeOnly ? 'AND NOT sv.retired' : ''}`,
    params,
  };
}

/**
 * The version of an expansion member (`alias`) as `ConceptRepository.memberCodes` reads it: the
 * one it pins, else the current one; as `m` (its `mnemonic` and `retired`).
 */
function memberVersionOf(alias: string): string {
  return `CROSS JOIN LATERAL (
    SELECT h.mnemonic, h.retired FROM concept_versions h
    WHERE h.id = ${alias}.concept_version_id
    UNION ALL
    SELECT h.mnemonic, h.retired FROM concept_versions h
    WHERE ${alias}.concept_version_id IS NULL AND h.concept_id = ${alias}.concept_id
      AND h.valid_to_seq IS NULL) m`;
}

/** Reads of repositories and their content as the FHIR-format endpoints need them. */
export class FhirRepository {
  constructor(private readonly em: EntityManager) {}

  /**
   * Repository versions matching a FHIR search that the viewer may see, by owner, repository id
   * and then newest version first.
   */
  async search(
    filter: FhirRepoSearch,
    viewer: Viewer,
    window: Window,
  ): Promise<Slice<FhirRepoRow>> {
    const params: unknown[] = [];
    const where = this.where(filter, viewer, params);
    const from = `FROM repository_versions v JOIN repositories r ON r.id = v.repository_id
      LEFT JOIN organizations o ON o.id = r.owner_org_id
      LEFT JOIN users u ON u.id = r.owner_user_id
      WHERE ${where}`;
    // Every row asked for: their number is the total, and no count is needed.
    const all = window.limit === 0 && window.offset === 0;
    let total = 0;
    if (!all) {
      const counted = await this.em.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n ${from}`,
        params,
      );
      total = counted[0]?.n ?? 0;
      if (total === 0 || window.offset >= total) return { total, rows: [] };
    }
    const sql = `SELECT ${jsonColumns(this.em, RepositoryEntity, 'r')} AS repo,
         ${jsonColumns(this.em, RepositoryVersionEntity, 'v')} AS version,
         o.mnemonic AS owner_org, u.username AS owner_user
       ${from}
       ORDER BY coalesce(o.mnemonic, u.username), r.mnemonic, v.created_at DESC, v.id DESC
       ${window.limit > 0 ? `LIMIT ${window.limit}` : ''} OFFSET ${window.offset}`;
    // Every version of a URL, read by each terminology operation: prepared, as planning it costs
    // more than running it (its text is one per filter shape, never per page).
    const rows = all
      ? await preparedQuery<RowRaw>(this.em, sql, params)
      : await this.em.query<RowRaw[]>(sql, params);
    return {
      total: all ? rows.length : total,
      rows: rows.map((raw) => ({
        repo: hydrate(this.em, RepositoryEntity, raw.repo)!,
        version: hydrate(this.em, RepositoryVersionEntity, raw.version)!,
        ownerType: raw.owner_org !== null ? 'Organization' : 'User',
        ownerId: raw.owner_org ?? raw.owner_user ?? '',
      })),
    };
  }

  /**
   * The codes of the concepts naming each of `codes` as a parent, as a source version (`seq`;
   * null = HEAD) sees them.
   */
  async childCodes(
    repositoryId: string,
    seq: string | null,
    codes: string[],
  ): Promise<Map<string, string[]>> {
    if (codes.length === 0) return new Map();
    const rows = await this.em.query<Array<{ parent: string; child: string }>>(
      `SELECT pc AS parent, cv.mnemonic AS child
       FROM concept_versions cv CROSS JOIN LATERAL unnest(cv.parent_codes) AS pc
       WHERE cv.repository_id = $1 AND cv.parent_codes && $2::text[] AND pc = ANY($2::text[])
         AND ${versionAt('cv', seq === null ? null : '$3')}
       ORDER BY cv.mnemonic`,
      seq === null ? [repositoryId, codes] : [repositoryId, codes, seq],
    );
    const children = new Map<string, string[]>();
    for (const { parent, child } of rows) {
      children.set(parent, [...(children.get(parent) ?? []), child]);
    }
    return children;
  }

  /**
   * The concepts of a source version (`seq`; null = HEAD) whose codes are among `codes` (retired
   * ones too), in code order: one concept's rows each, found through the `(repository_id,
   * mnemonic)` key, never the source's; in one statement. `caseless`: codes match whatever their
   * case (no index serves that: the source's keys are scanned, not its versions). `ancestors`:
   * their parents, the parents' parents and so on as well. `children`: with the codes of the
   * concepts naming each as a parent (as `childCodes`).
   */
  async conceptsByCode(
    repositoryId: string,
    seq: string | null,
    codes: string[],
    options: { caseless: boolean; ancestors: boolean; children: boolean },
  ): Promise<{ concepts: ConceptVersionEntity[]; children: Map<string, string[]> }> {
    if (codes.length === 0) return { concepts: [], children: new Map() };
    const at = (alias: string): string => versionAt(alias, seq === null ? null : '$3');
    const wanted = options.caseless ? codes.map((code) => code.toLowerCase()) : codes;
    // One code (a `$lookup`, a `$validate-code`) is compared as one value: PostgreSQL then plans
    // the prepared statement once for all codes. Against an array of unknown length it expects
    // several rows, finds its generic plan dearer and plans every call anew (0.9 → 0.4 ms).
    const one = wanted.length === 1 && !options.ancestors;
    const params: unknown[] = [repositoryId, one ? wanted[0] : wanted];
    if (seq !== null) params.push(seq);
    const key = options.caseless ? 'lower(c.mnemonic)' : 'c.mnemonic';
    const childCodes = options.children
      ? childCodesOf('cv', '$1', seq === null ? null : '$3')
      : `'{}'::text[]`;
    const select = `SELECT ${jsonColumns(this.em, ConceptVersionEntity, 'cv')} AS row,
         ${childCodes} AS children
       FROM concepts c JOIN concept_versions cv ON cv.concept_id = c.id AND ${at('cv')}`;
    const sql = options.ancestors
      ? `WITH RECURSIVE wanted(code) AS (
           SELECT unnest($2::text[])
           UNION
           SELECT ${options.caseless ? 'lower(p.code)' : 'p.code'} FROM wanted w
             JOIN concepts c ON c.repository_id = $1 AND ${key} = w.code
             JOIN concept_versions cv ON cv.concept_id = c.id AND ${at('cv')}
             CROSS JOIN LATERAL unnest(cv.parent_codes) AS p(code))
         ${select}
         WHERE c.repository_id = $1 AND ${key} IN (SELECT code FROM wanted)
         ORDER BY cv.mnemonic, cv.id`
      : `${select}
         WHERE c.repository_id = $1 AND ${key} ${one ? '= $2::text' : '= ANY($2::text[])'}
         ORDER BY cv.mnemonic, cv.id`;
    const rows = await preparedQuery<{ row: Raw; children: string[] }>(this.em, sql, params);
    return this.withChildren(rows);
  }

  /**
   * How many active members of an expansion from one member repository the source version
   * `source` (`seq` null: HEAD) has a concept for, by code (as `memberConcepts` finds them; with
   * `read.activeOnly`, a concept not retired there), and whether every member from that
   * repository is pinned to a version (then the count can only change with the expansion).
   */
  async memberConceptCount(
    expansionId: string,
    memberRepositoryId: string,
    source: { repositoryId: string; seq: string | null },
    read: MemberRead,
  ): Promise<{ count: number; allPinned: boolean }> {
    const { sql, params } = memberConceptsSql(expansionId, memberRepositoryId, source, read);
    // Planned for its parameters, not prepared: a generic plan, made after a few small
    // collections, counts a large one a row at a time (seconds where this takes milliseconds).
    const rows = await this.em.query<Array<{ n: number; followed: boolean }>>(
      `SELECT (SELECT count(*)::int ${sql}) AS n,
         EXISTS (SELECT 1 FROM expansion_concepts u WHERE u.expansion_id = $1
           AND u.repository_id = $2 AND u.concept_version_id IS NULL) AS followed`,
      params,
    );
    return { count: rows[0]?.n ?? 0, allPinned: rows[0]?.followed === false };
  }

  /**
   * A page of the concepts of the source version `source` that the active members of an
   * expansion from one member repository name by code (with `read.activeOnly`, those not retired
   * there), in member order (as `memberCodes` reads the members: by their id): one statement,
   * reading the page's rows only.
   */
  async memberConcepts(
    expansionId: string,
    memberRepositoryId: string,
    source: { repositoryId: string; seq: string | null },
    window: { offset: number; limit?: number },
    read: MemberRead,
  ): Promise<{ concepts: ConceptVersionEntity[]; children: Map<string, string[]> }> {
    const { sql, params } = memberConceptsSql(expansionId, memberRepositoryId, source, read);
    // Planned for its parameters, not prepared (see memberConceptCount): a generic plan made
    // after small collections reads a large one's members a row at a time.
    const limit = `$${params.length + 1}`;
    const offset = `$${params.length + 2}`;
    const children = read.children
      ? childCodesOf('sv', '$3', source.seq === null ? null : '$4')
      : `'{}'::text[]`;
    const rows = await this.em.query<Array<{ row: Raw; children: string[] }>>(
      `SELECT ${jsonColumns(this.em, ConceptVersionEntity, 'sv', memberColumns(read))} AS row,
         ${children} AS children
       ${sql}
       ORDER BY x.mnemonic, x.concept_id
       LIMIT ${limit}::int OFFSET ${offset}::int`,
      [...params, window.limit ?? null, window.offset],
    );
    return this.withChildren(rows);
  }

  /**
   * The texts (code, display, names) of the concepts `memberConcepts` reads whose search text
   * holds each of `needles` (lower-case ASCII letters and digits), in member order: one
   * statement, reading light rows only, found through the trigram index of `search_text` (the
   * code, names and descriptions folded as `foldedWords` folds them: decomposed, marks dropped,
   * lower-cased). Where JavaScript's lower case of a code's texts holds a needle, so does its
   * folded search text, so none is left out that could match: the caller matches them exactly.
   */
  async memberConceptTexts(
    expansionId: string,
    memberRepositoryId: string,
    source: { repositoryId: string; seq: string | null },
    read: MemberRead,
    needles: string[],
  ): Promise<Array<{ id: string; code: string; display: string | null; names: string[] }>> {
    const seq = source.seq === null ? null : '$4';
    const params: unknown[] = [expansionId, memberRepositoryId, source.repositoryId];
    if (source.seq !== null) params.push(source.seq);
    // One LIKE per needle: each can use the trigram index (an array of patterns cannot).
    const holds = needles.map((needle) => {
      params.push(`%${needle}%`);
      return `AND sv.search_text LIKE $${params.length}`;
    });
    // Planned for its parameters, not prepared (see memberConceptCount).
    return this.em.query(
      `SELECT sv.id::text AS id, sv.mnemonic AS code, sv.display_name AS display,
         ARRAY(SELECT n->>'name' FROM jsonb_array_elements(sv.names) n
               WHERE n->>'name' IS NOT NULL) AS names
       FROM concept_versions sv
       JOIN expansion_concepts x ON x.expansion_id = $1 AND x.mnemonic = sv.mnemonic
         AND x.repository_id = $2
       ${memberVersionOf('x')}
       WHERE sv.repository_id = $3 AND ${versionAt('sv', seq)} ${holds.join(' ')}
         AND m.mnemonic = sv.mnemonic AND NOT m.retired
         ${read.activeOnly ? 'AND NOT sv.retired' : ''}
       ORDER BY x.mnemonic, x.concept_id`,
      params,
    );
  }

  /**
   * Concept versions of the source version `source` by their ids, in the order of `ids` (with
   * `read.children`, their children's codes); one statement.
   */
  async conceptVersionsById(
    source: { repositoryId: string; seq: string | null },
    ids: string[],
    read: MemberRead,
  ): Promise<{ concepts: ConceptVersionEntity[]; children: Map<string, string[]> }> {
    if (ids.length === 0) return { concepts: [], children: new Map() };
    const children = read.children
      ? childCodesOf('sv', '$2', source.seq === null ? null : '$3')
      : `'{}'::text[]`;
    const params: unknown[] = [ids, source.repositoryId];
    if (read.children && source.seq !== null) params.push(source.seq);
    const rows = await this.em.query<Array<{ id: string; row: Raw; children: string[] }>>(
      `SELECT sv.id::text AS id,
         ${jsonColumns(this.em, ConceptVersionEntity, 'sv', memberColumns(read))} AS row,
         ${children} AS children
       FROM concept_versions sv WHERE sv.id = ANY($1::bigint[]) AND sv.repository_id = $2`,
      params,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return this.withChildren(ids.map((id) => byId.get(id)).filter((r) => r !== undefined));
  }

  /** Concept version rows read with their children's codes, as concepts and children by code. */
  private withChildren(rows: Array<{ row: Raw; children: string[] }>): {
    concepts: ConceptVersionEntity[];
    children: Map<string, string[]>;
  } {
    const children = new Map<string, string[]>();
    const concepts = rows.map((r) => {
      const concept = hydrate(this.em, ConceptVersionEntity, r.row)!;
      if (r.children.length > 0) children.set(concept.mnemonic, r.children);
      return concept;
    });
    return { concepts, children };
  }

  /**
   * The member repositories of an expansion (among `repositoryIds`) that have active members (as
   * `ConceptRepository.memberCodes` reads them), in the order their first member comes in member
   * order (`x.mnemonic, x.concept_id`): the order a value set's includes take, grouped from its
   * members. One repository is only checked for a member.
   */
  async memberRepositoryOrder(expansionId: string, repositoryIds: string[]): Promise<string[]> {
    if (repositoryIds.length === 0) return [];
    const ordered = repositoryIds.length > 1;
    // Planned for its parameters, not prepared (see memberConceptCount).
    const rows = await this.em.query<Array<{ id: string }>>(
      `SELECT r.id::text AS id
       FROM unnest($2::bigint[]) AS r(id)
       CROSS JOIN LATERAL (
         SELECT x.mnemonic, x.concept_id FROM expansion_concepts x ${memberVersionOf('x')}
         WHERE x.expansion_id = $1 AND x.repository_id = r.id AND NOT m.retired
         ${ordered ? 'ORDER BY x.mnemonic, x.concept_id' : ''}
         LIMIT 1) f
       ORDER BY f.mnemonic, f.concept_id`,
      [expansionId, repositoryIds],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Per member repository of an expansion, the codes of its active members (their versions as
   * `ConceptRepository.memberCodes` reads them) among `codes`, found through the `(repository_id,
   * mnemonic)` key and the expansion's `(expansion_id, concept_id)` key; where none of `codes` is
   * a member, the code of one member that stands for the rest; a repository without active
   * members is left out. A few rows per repository whatever the members.
   */
  async memberCodesAmong(
    expansionId: string,
    repositoryIds: string[],
    codes: string[],
  ): Promise<Map<string, { among: string[]; other?: string }>> {
    const found = new Map<string, { among: string[]; other?: string }>();
    // One keyed statement per member repository (most value sets draw on one or two), prepared:
    // with the repository and (mostly) the code as single values PostgreSQL plans it once for
    // every call (0.3 ms); as one statement over an array of repositories it planned each call
    // anew (2 ms, most of a `$validate-code`).
    const one = codes.length === 1;
    const sql = `SELECT array_agg(m.mnemonic ORDER BY m.mnemonic) AS among
       FROM concepts c JOIN expansion_concepts x ON x.expansion_id = $1 AND x.concept_id = c.id
       ${memberVersionOf('x')}
       WHERE c.repository_id = $2 AND ${one ? 'c.mnemonic = $3::text' : 'c.mnemonic = ANY($3::text[])'}
         AND x.repository_id = $2 AND NOT m.retired`;
    for (const repositoryId of repositoryIds) {
      const [row] = await preparedQuery<{ among: string[] | null }>(this.em, sql, [
        expansionId,
        repositoryId,
        one ? codes[0] : codes,
      ]);
      if (row?.among) {
        found.set(repositoryId, { among: row.among });
        continue;
      }
      // None is a member: any member stands for the rest. Planned for its parameters, not
      // prepared: a generic plan may scan every expansion's members for the first of this one.
      const [other] = await this.em.query<Array<{ code: string }>>(
        `SELECT m.mnemonic AS code FROM expansion_concepts x ${memberVersionOf('x')}
         WHERE x.expansion_id = $1 AND x.repository_id = $2 AND NOT m.retired
         LIMIT 1`,
        [expansionId, repositoryId],
      );
      if (other) found.set(repositoryId, { among: [], other: other.code });
    }
    return found;
  }

  /** The repositories the ends of a source version's mappings are in (its own included). */
  async mappingEndRepositoryIds(repositoryId: string, seq: string | null): Promise<string[]> {
    const rows = await this.em.query<Array<{ id: string }>>(
      `SELECT DISTINCT e.id::text AS id
       FROM mapping_versions mv
       CROSS JOIN LATERAL (VALUES (mv.from_repository_id), (mv.to_repository_id)) AS e(id)
       WHERE mv.repository_id = $1 AND e.id IS NOT NULL AND ${versionAt('mv', seq === null ? null : '$2')}
       ORDER BY 1`,
      seq === null ? [repositoryId] : [repositoryId, seq],
    );
    return rows.map((row) => row.id);
  }

  private where(filter: FhirRepoSearch, viewer: Viewer, params: unknown[]): string {
    const p = (value: unknown): string => `$${params.push(value)}`;
    const conditions = [
      `r.kind = ${p(filter.kind)}`,
      visibleRepository('r', viewer, params),
      // A deactivated user's repositories are hidden with the account (spec core §3).
      '(u.id IS NULL OR u.is_active)',
    ];
    const versions = filter.versions;
    switch (versions.kind) {
      case 'latest':
        // As `latest` in a path reads it (src/repositories/path.repository.ts).
        conditions.push(`v.id = (SELECT lv.id FROM repository_versions lv
          WHERE lv.repository_id = r.id AND lv.released ORDER BY lv.created_at DESC, lv.id DESC LIMIT 1)`);
        break;
      case 'released':
        conditions.push('v.released');
        break;
      case 'named':
        conditions.push(`v.mnemonic = ${p(versions.version)}`);
        break;
      case 'stored':
        conditions.push(`(v.seq IS NOT NULL OR NOT EXISTS (SELECT 1 FROM repository_versions ov
          WHERE ov.repository_id = r.id AND ov.seq IS NOT NULL))`);
        break;
    }
    if (filter.owner) {
      conditions.push(
        'orgId' in filter.owner
          ? `r.owner_org_id = ${p(filter.owner.orgId)}`
          : `r.owner_user_id = ${p(filter.owner.userId)}`,
      );
    }
    const named = (names: RepoName[]): string =>
      names.length === 0
        ? 'false'
        : `(${names
            .map(
              (n) =>
                `(r.mnemonic = ${p(n.mnemonic)} AND ${
                  n.ownerType === 'org' ? 'o.mnemonic' : 'u.username'
                } = ${p(n.owner)})`,
            )
            .join(' OR ')})`;
    if (filter.names) conditions.push(named(filter.names));
    if (filter.url) {
      const canonical = filter.url.canonical.length
        ? `${frozen('canonicalUrl', 'canonical_url')} = ANY(${p(filter.url.canonical)}::text[])`
        : 'false';
      conditions.push(`(${canonical} OR ${named(filter.url.repos)})`);
    }
    const prefix = (expression: string, value: string): string =>
      `registry_fold(coalesce(${expression}, '')) LIKE registry_fold(${p(likeLiteral(value))}) || '%'`;
    if (filter.name !== undefined) conditions.push(prefix(frozen('name', 'name'), filter.name));
    if (filter.title !== undefined) {
      conditions.push(
        prefix(
          `coalesce(${frozen('fullName', 'full_name')}, ${frozen('name', 'name')})`,
          filter.title,
        ),
      );
    }
    if (filter.status === 'active') conditions.push('v.released AND NOT v.retired');
    if (filter.status === 'draft') conditions.push('NOT v.released AND NOT v.retired');
    if (filter.status === 'retired') conditions.push('v.retired');
    return conditions.join(' AND ');
  }
}
