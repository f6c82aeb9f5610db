import type {
  DeepPartial,
  EntityManager,
  EntityTarget,
  FindOptionsWhere,
  ObjectLiteral,
  Repository,
  SelectQueryBuilder,
} from 'typeorm';
import { insertRows } from './bulk';
import { sliceOf, type Slice, type Window } from './list';

/** A content version row: current for the changes `valid_from_seq <= s < valid_to_seq`. */
interface VersionRow extends ObjectLiteral {
  id: string;
  validToSeq: string | null;
}

/** Where a content kind keeps its versions. */
export interface VersionTable {
  /** Table name, e.g. `concept_versions`. */
  table: string;
  /** Query alias, e.g. `cv`. */
  alias: string;
  /** The column naming the versioned object, e.g. `concept_id`, and its entity property. */
  key: string;
  keyProperty: string;
}

/**
 * The questions every versioned content kind (concepts, mappings) answers the same way about its
 * versions (design §4: one row per version, an interval of changes for each).
 */
export abstract class VersionedRepository<TVersion extends VersionRow> {
  protected readonly versions: Repository<TVersion>;

  protected constructor(
    protected readonly em: EntityManager,
    versionEntity: EntityTarget<TVersion>,
    private readonly t: VersionTable,
  ) {
    this.versions = em.getRepository(versionEntity);
  }

  insertVersion(values: DeepPartial<TVersion>): Promise<TVersion> {
    return this.versions.save(this.versions.create(values));
  }

  /** Inserts many versions in one statement (see `insertRows`). */
  async insertVersions(rows: ReadonlyArray<Partial<TVersion>>): Promise<void> {
    await insertRows(this.em, this.versions.target, rows);
  }

  /** Ends the current versions of many objects at change `seq`, in one statement. */
  async endCurrentOf(objectIds: readonly string[], seq: string): Promise<void> {
    if (objectIds.length === 0) return;
    await this.em.query(
      `UPDATE ${this.t.table} SET valid_to_seq = $2
       WHERE ${this.t.key} = ANY($1::bigint[]) AND valid_to_seq IS NULL`,
      [objectIds, seq],
    );
  }

  /** The current (HEAD) versions of a repository's objects with these ids (mnemonics). */
  currentByMnemonics(repositoryId: string, mnemonics: readonly string[]): Promise<TVersion[]> {
    if (mnemonics.length === 0) return Promise.resolve([]);
    return this.versions
      .createQueryBuilder(this.t.alias)
      .where(
        `${this.t.alias}.repository_id = :repositoryId AND ${this.t.alias}.valid_to_seq IS NULL
         AND ${this.t.alias}.mnemonic = ANY(:mnemonics)`,
        { repositoryId, mnemonics: [...mnemonics] },
      )
      .getMany();
  }

  /** Ends the current version at change `seq` (it stays readable in earlier versions). */
  async endCurrent(objectId: string, seq: string): Promise<void> {
    await this.em.query(
      `UPDATE ${this.t.table} SET valid_to_seq = $2 WHERE ${this.t.key} = $1 AND valid_to_seq IS NULL`,
      [objectId, seq],
    );
  }

  /** The current (HEAD) versions of every object of one repository, by id. */
  currentOfRepository(repositoryId: string): Promise<TVersion[]> {
    return this.versions
      .createQueryBuilder(this.t.alias)
      .where(
        `${this.t.alias}.repository_id = :repositoryId AND ${this.t.alias}.valid_to_seq IS NULL`,
        { repositoryId },
      )
      .orderBy(`${this.t.alias}.id`)
      .getMany();
  }

  /** The version current at HEAD (`seq` null) or at a frozen change number. */
  findVersionAt(objectId: string, seq: string | null): Promise<TVersion | null> {
    const qb = this.ofObject(objectId);
    atChange(qb, this.t.alias, seq);
    return qb.getOne();
  }

  findVersionById(objectId: string, versionId: string): Promise<TVersion | null> {
    if (!/^\d{1,18}$/.test(versionId)) return Promise.resolve(null);
    return this.versions.findOneBy({
      [this.t.keyProperty]: objectId,
      id: versionId,
    } as FindOptionsWhere<TVersion>);
  }

  /** Every version of one object, newest first. */
  listVersions(objectId: string, window: Window): Promise<Slice<TVersion>> {
    const id = `${this.t.alias}.id`;
    return sliceOf(this.ofObject(objectId).orderBy(id, 'DESC'), window, [
      { sql: id, type: 'id', desc: true, nullable: false },
    ]);
  }

  /** How many versions each object has. */
  async countVersions(objectIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.em.query<Array<{ id: string; n: number }>>(
      `SELECT ${this.t.key}::text AS id, count(*)::int AS n FROM ${this.t.table}
       WHERE ${this.t.key} = ANY($1::bigint[]) GROUP BY ${this.t.key}`,
      [objectIds],
    );
    return new Map(rows.map((r) => [r.id, r.n]));
  }

  private ofObject(objectId: string): SelectQueryBuilder<TVersion> {
    return this.versions
      .createQueryBuilder(this.t.alias)
      .where(`${this.t.alias}.${this.t.key} = :objectId`, { objectId });
  }
}

/**
 * `atChange` for raw SQL: rows current at a change (`seq` null = HEAD), its parameter pushed onto
 * `params`.
 */
export function interval(seq: string | null, params: unknown[], alias?: string): string {
  const p = alias ? `${alias}.` : '';
  if (seq === null) return `${p}valid_to_seq IS NULL`;
  params.push(seq);
  const n = params.length;
  return `${p}valid_from_seq <= $${n} AND (${p}valid_to_seq IS NULL OR ${p}valid_to_seq > $${n})`;
}

/** Rows as of a change: current ones for HEAD, those whose interval holds `seq` otherwise. */
export function atChange<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  alias: string,
  seq: string | null,
): void {
  if (seq === null) {
    qb.andWhere(`${alias}.valid_to_seq IS NULL`);
    return;
  }
  qb.andWhere(
    `${alias}.valid_from_seq <= :seq AND (${alias}.valid_to_seq IS NULL OR ${alias}.valid_to_seq > :seq)`,
    {
      seq,
    },
  );
}
