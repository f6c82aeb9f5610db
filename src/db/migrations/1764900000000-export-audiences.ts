import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An export is written for one audience (who may read the repository: everyone, or one owner's
 * readers) and is served only while it still fits what it was written from:
 *
 * - `repository_exports.audience` names the audience; rows from before this column were written
 *   with their creator's rights and so read as written for no audience (never served again).
 * - `visibility_narrowings.n` counts the changes that may hide content somebody could see before:
 *   a repository or org made private, deactivated or deleted, a user deactivated. An export
 *   records the count read before it started; one written before a narrowing is not served.
 */
export class ExportAudiences1764900000000 implements MigrationInterface {
  name = 'ExportAudiences1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE repository_exports ADD COLUMN audience text`);
    await q.query(`ALTER TABLE repository_exports ADD COLUMN narrowings bigint`);
    await q.query(`
      CREATE TABLE visibility_narrowings (
        id smallint PRIMARY KEY CHECK (id = 1),
        n bigint NOT NULL
      )`);
    await q.query(`INSERT INTO visibility_narrowings (id, n) VALUES (1, 0)`);
    await q.query(`
      CREATE FUNCTION count_visibility_narrowing() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE visibility_narrowings SET n = n + 1 WHERE id = 1;
        RETURN NULL;
      END $$`);
    const narrowed = `(OLD.public_access <> 'None' AND NEW.public_access = 'None')`;
    await q.query(`
      CREATE TRIGGER repositories_narrowed AFTER UPDATE OF public_access, is_active ON repositories
      FOR EACH ROW WHEN (${narrowed} OR (OLD.is_active AND NOT NEW.is_active))
      EXECUTE FUNCTION count_visibility_narrowing()`);
    await q.query(`
      CREATE TRIGGER repositories_removed AFTER DELETE ON repositories
      FOR EACH STATEMENT EXECUTE FUNCTION count_visibility_narrowing()`);
    await q.query(`
      CREATE TRIGGER organizations_narrowed AFTER UPDATE OF public_access ON organizations
      FOR EACH ROW WHEN ${narrowed}
      EXECUTE FUNCTION count_visibility_narrowing()`);
    await q.query(`
      CREATE TRIGGER organizations_removed AFTER DELETE ON organizations
      FOR EACH STATEMENT EXECUTE FUNCTION count_visibility_narrowing()`);
    await q.query(`
      CREATE TRIGGER users_narrowed AFTER UPDATE OF is_active ON users
      FOR EACH ROW WHEN (OLD.is_active AND NOT NEW.is_active)
      EXECUTE FUNCTION count_visibility_narrowing()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER users_narrowed ON users`);
    await q.query(`DROP TRIGGER organizations_removed ON organizations`);
    await q.query(`DROP TRIGGER organizations_narrowed ON organizations`);
    await q.query(`DROP TRIGGER repositories_removed ON repositories`);
    await q.query(`DROP TRIGGER repositories_narrowed ON repositories`);
    await q.query(`DROP FUNCTION count_visibility_narrowing()`);
    await q.query(`DROP TABLE visibility_narrowings`);
    await q.query(`ALTER TABLE repository_exports DROP COLUMN narrowings`);
    await q.query(`ALTER TABLE repository_exports DROP COLUMN audience`);
  }
}
