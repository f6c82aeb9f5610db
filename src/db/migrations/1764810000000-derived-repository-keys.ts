import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Foreign keys that checked nothing their rows do not already guarantee, dropped: each cost every
 * inserted version a trigger call and a lookup (a bulk import of CIEL's 500,000 mappings paid
 * ~25 ms of every 2,000-row batch's ~120 ms insert for the three on mapping versions).
 *
 * - A version's `repository_id` is its concept's or mapping's, whose own key deletes it with its
 *   repository (`concept_id`/`mapping_id` → ON DELETE CASCADE).
 * - A mapping end's `from_repository_id`/`to_repository_id` name where the end was found when the
 *   version was written. Ids are never reused, and every read of them joins or looks the
 *   repository up and treats one that is gone as none, which is what ON DELETE SET NULL made of
 *   it (deleting a repository no longer rewrites other repositories' mapping versions).
 */
const KEYS: Array<[table: string, column: string, onDelete: string]> = [
  ['concept_versions', 'repository_id', 'CASCADE'],
  ['mapping_versions', 'repository_id', 'CASCADE'],
  ['mapping_versions', 'from_repository_id', 'SET NULL'],
  ['mapping_versions', 'to_repository_id', 'SET NULL'],
];

export class DerivedRepositoryKeys1764810000000 implements MigrationInterface {
  name = 'DerivedRepositoryKeys1764810000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, column] of KEYS) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_${column}_fkey`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table, column, onDelete] of KEYS) {
      if (onDelete === 'SET NULL') {
        await q.query(
          `UPDATE ${table} t SET ${column} = NULL
           WHERE ${column} IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM repositories r WHERE r.id = t.${column})`,
        );
      }
      await q.query(
        `ALTER TABLE ${table} ADD CONSTRAINT ${table}_${column}_fkey
         FOREIGN KEY (${column}) REFERENCES repositories (id) ON DELETE ${onDelete}`,
      );
    }
  }
}
