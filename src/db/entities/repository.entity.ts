import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import type { PublicAccess } from './organization.entity';

export type RepositoryKind = 'source' | 'collection';

/** Id schemes for content created without ids (spec core §4.6). */
export interface AutoIdSettings {
  autoidConceptMnemonic?: 'sequential' | 'uuid' | null;
  autoidConceptExternalId?: 'sequential' | 'uuid' | null;
  autoidMappingMnemonic?: 'sequential' | 'uuid' | null;
  autoidMappingExternalId?: 'sequential' | 'uuid' | null;
  autoidConceptMnemonicStartFrom?: number | null;
  autoidConceptExternalIdStartFrom?: number | null;
  autoidMappingMnemonicStartFrom?: number | null;
  autoidMappingExternalIdStartFrom?: number | null;
  autoidConceptNameExternalId?: 'uuid' | null;
  autoidConceptDescriptionExternalId?: 'uuid' | null;
}

/** A source or a collection (one table: their ids are unique per owner across both kinds). */
@Entity({ name: 'repositories' })
export class RepositoryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'text' })
  kind: RepositoryKind;

  @Column({ name: 'owner_org_id', type: 'bigint', nullable: true })
  ownerOrgId: string | null;

  @Column({ name: 'owner_user_id', type: 'bigint', nullable: true })
  ownerUserId: string | null;

  /** The id in URLs (`short_code`); never changes. */
  @Column({ type: 'text' })
  mnemonic: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'full_name', type: 'text', nullable: true })
  fullName: string | null;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'text', nullable: true })
  website: string | null;

  @Column({ name: 'external_id', type: 'text', nullable: true })
  externalId: string | null;

  @Column({ name: 'public_access', type: 'text', default: 'View' })
  publicAccess: PublicAccess;

  @Column({ name: 'default_locale', type: 'text', default: 'en' })
  defaultLocale: string;

  @Column({ name: 'supported_locales', type: 'text', array: true, default: () => "ARRAY['en']" })
  supportedLocales: string[];

  @Column({ name: 'source_type', type: 'text', nullable: true })
  sourceType: string | null;

  @Column({ name: 'collection_type', type: 'text', nullable: true })
  collectionType: string | null;

  @Column({ name: 'preferred_source', type: 'text', nullable: true })
  preferredSource: string | null;

  @Column({ name: 'custom_validation_schema', type: 'text', nullable: true })
  customValidationSchema: string | null;

  @Column({ name: 'canonical_url', type: 'text', nullable: true })
  canonicalUrl: string | null;

  /** A source's hierarchy root: the code of one of its concepts, or null. */
  @Column({ name: 'hierarchy_root', type: 'text', nullable: true })
  hierarchyRoot: string | null;

  @Column({ type: 'jsonb', nullable: true })
  extras: Record<string, unknown> | null;

  /** OCL's `meta`: how clients show it (`display.default_filter`), not content. */
  @Column({ type: 'jsonb', nullable: true })
  meta: Record<string, unknown> | null;

  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" })
  settings: AutoIdSettings;

  /** The number of the latest content change; versions freeze a value of it. */
  @Column({ name: 'head_seq', type: 'bigint', default: 0 })
  headSeq: string;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy: string | null;

  @Column({ name: 'updated_by', type: 'text', nullable: true })
  updatedBy: string | null;
}
