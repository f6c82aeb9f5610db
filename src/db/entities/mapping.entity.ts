import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** The versioned object: the stable mapping a source holds under an id. */
@Entity({ name: 'mappings' })
export class MappingEntity {
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

/** One version of a mapping; the same change-interval rules as concept versions. */
@Entity({ name: 'mapping_versions' })
export class MappingVersionEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'mapping_id', type: 'bigint' })
  mappingId: string;

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

  @Column({ name: 'map_type', type: 'text', nullable: true })
  mapType: string | null;

  @Column({ name: 'from_source_url', type: 'text', nullable: true })
  fromSourceUrl: string | null;

  @Column({ name: 'from_source_version', type: 'text', nullable: true })
  fromSourceVersion: string | null;

  @Column({ name: 'from_concept_code', type: 'text', nullable: true })
  fromConceptCode: string | null;

  @Column({ name: 'from_concept_name', type: 'text', nullable: true })
  fromConceptName: string | null;

  @Column({ name: 'from_repository_id', type: 'bigint', nullable: true })
  fromRepositoryId: string | null;

  @Column({ name: 'from_concept_id', type: 'bigint', nullable: true })
  fromConceptId: string | null;

  @Column({ name: 'to_source_url', type: 'text', nullable: true })
  toSourceUrl: string | null;

  @Column({ name: 'to_source_version', type: 'text', nullable: true })
  toSourceVersion: string | null;

  @Column({ name: 'to_concept_code', type: 'text', nullable: true })
  toConceptCode: string | null;

  @Column({ name: 'to_concept_name', type: 'text', nullable: true })
  toConceptName: string | null;

  @Column({ name: 'to_repository_id', type: 'bigint', nullable: true })
  toRepositoryId: string | null;

  @Column({ name: 'to_concept_id', type: 'bigint', nullable: true })
  toConceptId: string | null;

  @Column({ name: 'sort_weight', type: 'double precision', nullable: true })
  sortWeight: number | null;

  @Column({ name: 'external_id', type: 'text', nullable: true })
  externalId: string | null;

  @Column({ type: 'jsonb', nullable: true })
  extras: Record<string, unknown> | null;

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
