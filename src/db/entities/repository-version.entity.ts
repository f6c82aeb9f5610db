import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

export const HEAD = 'HEAD';

/** Repository metadata as frozen by a version (spec core §9.2: later edits never change it). */
export interface RepositorySnapshot {
  name: string;
  fullName: string | null;
  description: string | null;
  website: string | null;
  externalId: string | null;
  publicAccess: string;
  defaultLocale: string;
  supportedLocales: string[];
  sourceType: string | null;
  collectionType: string | null;
  preferredSource: string | null;
  customValidationSchema: string | null;
  canonicalUrl: string | null;
  /** Absent from snapshots made before sources had a hierarchy root. */
  hierarchyRoot?: string | null;
  extras: Record<string, unknown> | null;
}

/** HEAD (`seq` null: follows every change) or a frozen version (`seq`: the change it froze). */
@Entity({ name: 'repository_versions' })
export class RepositoryVersionEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'repository_id', type: 'bigint' })
  repositoryId: string;

  /** The version id in URLs, or `HEAD`. */
  @Column({ type: 'text' })
  mnemonic: string;

  @Column({ type: 'bigint', nullable: true })
  seq: string | null;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'boolean', default: false })
  released: boolean;

  @Column({ type: 'boolean', default: false })
  retired: boolean;

  @Column({ name: 'previous_version', type: 'text', nullable: true })
  previousVersion: string | null;

  @Column({ name: 'external_id', type: 'text', nullable: true })
  externalId: string | null;

  @Column({ type: 'jsonb', nullable: true })
  extras: Record<string, unknown> | null;

  /** OCL's `meta` of this version (how clients show it); HEAD's lives on the repository row. */
  @Column({ type: 'jsonb', nullable: true })
  meta: Record<string, unknown> | null;

  /** The repository's metadata when the version was made; null for HEAD (which reads the live row). */
  @Column({ type: 'jsonb', nullable: true })
  metadata: RepositorySnapshot | null;

  @Column({ type: 'boolean', default: false })
  processing: boolean;

  /** Frozen with the version; null for HEAD, whose counts live on the repository row. */
  @Column({ name: 'active_concepts', type: 'integer', nullable: true })
  activeConcepts: number | null;

  @Column({ name: 'active_mappings', type: 'integer', nullable: true })
  activeMappings: number | null;

  /** A collection version's default expansion, which its concept and mapping lists read. */
  @Column({ name: 'expansion_id', type: 'bigint', nullable: true })
  expansionId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy: string | null;

  @Column({ name: 'updated_by', type: 'text', nullable: true })
  updatedBy: string | null;
}
