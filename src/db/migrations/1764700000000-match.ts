import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `$match` (spec operations §4.5, §5.1).
 *
 * The words of concepts' search text (`search_text`, what `q` searches) indexed as words, and the
 * dictionary of every such word: a typed word is corrected against the dictionary (short
 * strings, by trigram similarity) and concepts are then found by exact words, which a word
 * index answers in a fraction of a millisecond where trigram lookups on the long search text
 * cost many. The dictionary only grows (a word of a deleted concept stays and matches nothing);
 * a trigger adds the words of each new concept version that it lacks. No unique index: a writer
 * never waits on another's uncommitted word (two transactions adding the same new words in
 * different orders would deadlock); a word two writers add at once is merely listed twice.
 *
 * And the approval an administrator gives a user for `$match` when the instance requires it.
 */
export class Match1764700000000 implements MigrationInterface {
  name = 'Match1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN match_approved boolean NOT NULL DEFAULT false`);
    await q.query(
      `CREATE INDEX concept_versions_words ON concept_versions USING gin (to_tsvector('simple', search_text))`,
    );
    await q.query(`CREATE TABLE search_words (word text NOT NULL)`);
    await q.query(
      `INSERT INTO search_words (word)
       SELECT word FROM ts_stat('SELECT to_tsvector(''simple'', search_text) FROM concept_versions')`,
    );
    await q.query(
      `CREATE INDEX search_words_similar ON search_words USING gin (word gin_trgm_ops)`,
    );
    // A word's lookup (equality) and the words it begins.
    await q.query(`CREATE INDEX search_words_word ON search_words (word text_pattern_ops)`);
    await q.query(`
      CREATE FUNCTION concept_versions_words() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO search_words (word)
        SELECT DISTINCT w.word
        FROM new_rows n, unnest(tsvector_to_array(to_tsvector('simple', n.search_text))) AS w(word)
        WHERE NOT EXISTS (SELECT 1 FROM search_words s WHERE s.word = w.word);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER concept_versions_words AFTER INSERT ON concept_versions
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION concept_versions_words()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER concept_versions_words ON concept_versions`);
    await q.query(`DROP FUNCTION concept_versions_words()`);
    await q.query(`DROP TABLE search_words`);
    await q.query(`DROP INDEX concept_versions_words`);
    await q.query(`ALTER TABLE users DROP COLUMN match_approved`);
  }
}
