import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every server process keeps the holders of the API tokens it has checked (`AuthService`), so a
 * signed-in request costs no statement. What would make a kept holder wrong is announced on the
 * `registry_accounts` channel with the user's id, whichever process or tool made the change:
 * a user deactivated, deleted, renamed, made or unmade a superuser, or given other rate limits;
 * a token deleted or moved. NOTIFY is sent at commit, so a change rolled back announces nothing.
 */
export class AccountNotifications1765400000000 implements MigrationInterface {
  name = 'AccountNotifications1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_account_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_TABLE_NAME = 'users' THEN
          PERFORM pg_notify('registry_accounts', OLD.id::text);
        ELSE
          PERFORM pg_notify('registry_accounts', OLD.user_id::text);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER users_account_change
      AFTER UPDATE OF is_active, is_superuser, username, rate_limit_per_minute, rate_limit_per_day
        OR DELETE ON users
      FOR EACH ROW EXECUTE FUNCTION notify_account_change()`);
    await q.query(`
      CREATE TRIGGER api_tokens_account_change
      AFTER UPDATE OR DELETE ON api_tokens
      FOR EACH ROW EXECUTE FUNCTION notify_account_change()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER api_tokens_account_change ON api_tokens');
    await q.query('DROP TRIGGER users_account_change ON users');
    await q.query('DROP FUNCTION notify_account_change()');
  }
}
