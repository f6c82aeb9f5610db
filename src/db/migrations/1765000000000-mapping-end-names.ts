import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Mapping search finds a mapping by the current display name of the concept at either end
 * (OCL indexes each end as its code and its concept's name): the words of current concepts'
 * display names, folded, indexed by trigram so that `q` finds a word's concepts first and then
 * the mappings from or to them (`mapping_versions_from_concept_all`, `…_to_concept_all`). Each
 * name is indexed after a space, its ASCII punctuation read as spaces, so that the start of any of
 * its words is ` word` (`Malaria (disorder)` has ` disorder`).
 */
export class MappingEndNames1765000000000 implements MigrationInterface {
  name = 'MappingEndNames1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX concept_versions_head_display_words ON concept_versions
        USING gin ((' ' || regexp_replace(registry_fold(display_name), '[[:punct:]]+', ' ', 'g'))
          gin_trgm_ops) WHERE valid_to_seq IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX concept_versions_head_display_words`);
  }
}
