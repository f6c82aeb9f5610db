import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A concept name as stored on a version (spec core §2.6 ConceptName). */
export interface ConceptName {
  uuid: string;
  name: string;
  locale: string;
  locale_preferred: boolean;
  name_type: string | null;
  external_id: string | null;
}

/** A concept description as stored on a version (spec core §2.6 ConceptDescription). */
export interface ConceptDescription {
  uuid: string;
  description: string;
  locale: string;
  locale_preferred: boolean;
  description_type: string | null;
  external_id: string | null;
}

/** The versioned object: the stable concept a source holds under an id. */
@Entity({ name: 'concepts' })
export class ConceptEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'repository_id', type: 'bigint' })
  repositoryId: string;

  @Column({ type: 'text' })
  mnemonic: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy: string | null;
}

/**
 * One version of a concept, current for the source's changes `validFromSeq <= s < validToSeq`
 * (null = still current, i.e. in HEAD). Never updated after insert except to end it.
 */
@Entity({ name: 'concept_versions' })
export class ConceptVersionEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'concept_id', type: 'bigint' })
  conceptId: string;

  @Column({ name: 'repository_id', type: 'bigint' })
  repositoryId: string;

  @Column({ type: 'text' })
  mnemonic: string;

  @Column({ name: 'valid_from_seq', type: 'bigint' })
  validFromSeq: string;

  @Column({ name: 'valid_to_seq', type: 'bigint', nullable: true })
  validToSeq: string | null;

  @Column({ type: 'boolean', default: false })
  retired: boolean;

  @Column({ name: 'concept_class', type: 'text', nullable: true })
  conceptClass: string | null;

  @Column({ type: 'text', nullable: true })
  datatype: string | null;

  @Column({ name: 'external_id', type: 'text', nullable: true })
  externalId: string | null;

  @Column({ type: 'jsonb', default: () => "'[]'::jsonb" })
  names: ConceptName[];

  /** Ids of its parents in the same source (`parent_concept_urls`): the source's hierarchy. */
  @Column({ name: 'parent_codes', type: 'text', array: true, default: () => "'{}'::text[]" })
  parentCodes: string[];

  @Column({ type: 'jsonb', default: () => "'[]'::jsonb" })
  descriptions: ConceptDescription[];

  @Column({ type: 'jsonb', nullable: true })
  extras: Record<string, unknown> | null;

  @Column({ name: 'display_name', type: 'text', nullable: true })
  displayName: string | null;

  @Column({ name: 'display_locale', type: 'text', nullable: true })
  displayLocale: string | null;

  @Column({ name: 'checksum_standard', type: 'text', nullable: true })
  checksumStandard: string | null;

  @Column({ name: 'checksum_smart', type: 'text', nullable: true })
  checksumSmart: string | null;

  @Column({ name: 'update_comment', type: 'text', nullable: true })
  updateComment: string | null;

  /** Folded words for search; written with each version, never read back (not selected). */
  @Column({ name: 'search_text', type: 'text', default: '', select: false })
  searchText: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy: string | null;
}
