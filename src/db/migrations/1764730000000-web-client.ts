import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the OCL web client reads besides content (issue 15):
 *
 * - users' `first_name` / `last_name`;
 * - `events`: what happened to orgs and repositories, written by the services in the transaction
 *   of the change; `org_id` / `repository_id` / `owner_user_id` name what the event is about, so
 *   a user's dashboard finds the events of the orgs they belong to and the things they follow by
 *   index; the briefs of the object and of what it refers to are kept as they were, so an event
 *   still reads after what it names is deleted;
 * - `pins`: an org's or a user's ordered pinned repositories and orgs (`position` 0, 1, …);
 * - `follows`: users following users, orgs, sources and collections.
 */
export class WebClient1764730000000 implements MigrationInterface {
  name = 'WebClient1764730000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN first_name text, ADD COLUMN last_name text`);

    await q.query(`
      CREATE TABLE events (
        id bigserial PRIMARY KEY,
        event_type text NOT NULL,
        actor_id bigint REFERENCES users (id) ON DELETE SET NULL,
        object_url text NOT NULL,
        object jsonb NOT NULL,
        referenced_object_url text,
        referenced_object jsonb,
        org_id bigint REFERENCES organizations (id) ON DELETE CASCADE,
        repository_id bigint,
        owner_user_id bigint REFERENCES users (id) ON DELETE CASCADE,
        public boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX events_created ON events (created_at DESC, id DESC)`);
    await q.query(
      `CREATE INDEX events_org ON events (org_id, created_at DESC) WHERE org_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX events_repository ON events (repository_id, created_at DESC) WHERE repository_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX events_actor ON events (actor_id, created_at DESC)`);
    await q.query(
      `CREATE INDEX events_owner_user ON events (owner_user_id, created_at DESC) WHERE owner_user_id IS NOT NULL`,
    );

    await q.query(`
      CREATE TABLE pins (
        id bigserial PRIMARY KEY,
        user_id bigint REFERENCES users (id) ON DELETE CASCADE,
        org_id bigint REFERENCES organizations (id) ON DELETE CASCADE,
        resource_type text NOT NULL CHECK (resource_type IN ('Source', 'Collection', 'Organization')),
        resource_id bigint NOT NULL,
        position integer NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((user_id IS NULL) <> (org_id IS NULL))
      )`);
    await q.query(
      `CREATE UNIQUE INDEX pins_user_key ON pins (user_id, resource_type, resource_id) WHERE user_id IS NOT NULL`,
    );
    await q.query(
      `CREATE UNIQUE INDEX pins_org_key ON pins (org_id, resource_type, resource_id) WHERE org_id IS NOT NULL`,
    );

    await q.query(`
      CREATE TABLE follows (
        id bigserial PRIMARY KEY,
        follower_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        following_type text NOT NULL CHECK (following_type IN ('User', 'Organization', 'Source', 'Collection')),
        following_id bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (follower_id, following_type, following_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE follows`);
    await q.query(`DROP TABLE pins`);
    await q.query(`DROP TABLE events`);
    await q.query(`ALTER TABLE users DROP COLUMN first_name, DROP COLUMN last_name`);
  }
}
