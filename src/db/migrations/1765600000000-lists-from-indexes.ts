import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * List pages and counts read from indexes alone (issue 27: lists that read no more than they
 * must), the table vacuumed:
 * - A source's HEAD concepts narrowed by class or datatype are counted from their index. The
 *   indexes of 1764500000000 key on `lower(column)`, which PostgreSQL's planner cannot read back
 *   for an index-only scan (it asks for the column itself), so every count visited each row: 38 ms
 *   for the 8,661 drugs of a CIEL-scale source, 1.1 ms with the column carried (`INCLUDE`).
 * - A source's plain HEAD list (active concepts in id order) walks an index of exactly those, so
 *   a page far into it skips index entries, not rows: 90 ms → 2 ms at offset 15,000 (with the
 *   page's own columns built after the offset, `plainPages`).
 */
export class ListsFromIndexes1765600000000 implements MigrationInterface {
  name = 'ListsFromIndexes1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX concept_versions_head_active ON concept_versions (repository_id, mnemonic, id)
       WHERE valid_to_seq IS NULL AND NOT retired`,
    );
    for (const column of ['concept_class', 'datatype']) {
      await q.query(`DROP INDEX concept_versions_head_${column}`);
      await q.query(
        `CREATE INDEX concept_versions_head_${column} ON concept_versions
         (repository_id, lower(${column}), mnemonic, id) INCLUDE (${column})
         WHERE valid_to_seq IS NULL AND NOT retired`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX concept_versions_head_active`);
    for (const column of ['concept_class', 'datatype']) {
      await q.query(`DROP INDEX concept_versions_head_${column}`);
      await q.query(
        `CREATE INDEX concept_versions_head_${column} ON concept_versions
         (repository_id, lower(${column}), mnemonic, id) WHERE valid_to_seq IS NULL AND NOT retired`,
      );
    }
  }
}
