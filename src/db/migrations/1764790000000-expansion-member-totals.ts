import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How many members each expansion holds from each repository, and how many of them are pinned to
 * a retired version, kept by statement-level triggers on the member tables (one upsert per
 * statement, whatever its size), so that every write path keeps them exact. Counting a
 * collection's active members (its pages' totals, its detail, its summary) then reads a row per
 * member repository instead of every member: only followed members whose current version is
 * retired are still found at read time (they change with the source, not with the expansion).
 * A member's repository and pinned version never change, and a version's `retired` neither.
 */
export class ExpansionMemberTotals1764790000000 implements MigrationInterface {
  name = 'ExpansionMemberTotals1764790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE expansion_member_totals (
        expansion_id bigint NOT NULL REFERENCES expansions (id) ON DELETE CASCADE,
        resource char(1) NOT NULL CHECK (resource IN ('c', 'm')),
        repository_id bigint NOT NULL,
        members integer NOT NULL,
        retired_pinned integer NOT NULL,
        PRIMARY KEY (expansion_id, resource, repository_id)
      )`);
    for (const [resource, table, version, versions] of [
      ['c', 'expansion_concepts', 'concept_version_id', 'concept_versions'],
      ['m', 'expansion_mappings', 'mapping_version_id', 'mapping_versions'],
    ]) {
      const deltas = (rows: string): string => `
        SELECT x.expansion_id, x.repository_id, count(*)::int AS n,
          count(*) FILTER (WHERE pv.retired)::int AS retired
        FROM ${rows} x LEFT JOIN ${versions} pv ON pv.id = x.${version}
        GROUP BY x.expansion_id, x.repository_id
        ORDER BY x.expansion_id, x.repository_id`;
      // Deletes only lower existing rows: a deleted expansion's rows are gone with it (cascade).
      await q.query(`
        CREATE FUNCTION registry_total_${table}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('UPDATE', 'DELETE') THEN
            UPDATE expansion_member_totals t
            SET members = t.members - d.n, retired_pinned = t.retired_pinned - d.retired
            FROM (${deltas('old_rows')}) d
            WHERE t.expansion_id = d.expansion_id AND t.resource = '${resource}'
              AND t.repository_id = d.repository_id;
          END IF;
          IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO expansion_member_totals AS t
              (expansion_id, resource, repository_id, members, retired_pinned)
            SELECT d.expansion_id, '${resource}', d.repository_id, d.n, d.retired
            FROM (${deltas('new_rows')}) d
            ON CONFLICT (expansion_id, resource, repository_id) DO UPDATE
            SET members = t.members + excluded.members,
              retired_pinned = t.retired_pinned + excluded.retired_pinned;
          END IF;
          RETURN NULL;
        END $$`);
      await q.query(`CREATE TRIGGER ${table}_total_insert AFTER INSERT ON ${table}
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION registry_total_${table}()`);
      await q.query(`CREATE TRIGGER ${table}_total_update AFTER UPDATE ON ${table}
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION registry_total_${table}()`);
      await q.query(`CREATE TRIGGER ${table}_total_delete AFTER DELETE ON ${table}
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION registry_total_${table}()`);
      await q.query(`
        INSERT INTO expansion_member_totals
          (expansion_id, resource, repository_id, members, retired_pinned)
        SELECT d.expansion_id, '${resource}', d.repository_id, d.n, d.retired
        FROM (${deltas(table)}) d`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['expansion_concepts', 'expansion_mappings']) {
      for (const op of ['insert', 'update', 'delete']) {
        await q.query(`DROP TRIGGER ${table}_total_${op} ON ${table}`);
      }
      await q.query(`DROP FUNCTION registry_total_${table}()`);
    }
    await q.query(`DROP TABLE expansion_member_totals`);
  }
}
