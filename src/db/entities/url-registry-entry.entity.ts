import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

/**
 * One entry of a canonical URL registry (spec operations §2.3): owned by an org, a user, or by
 * nobody (the global registry). `namespace` (`/orgs/X/`, `/users/Y/`) says where the repository
 * registered under the URL lives.
 */
@Entity({ name: 'url_registry_entries' })
export class UrlRegistryEntryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'owner_org_id', type: 'bigint', nullable: true })
  ownerOrgId: string | null;

  @Column({ name: 'owner_user_id', type: 'bigint', nullable: true })
  ownerUserId: string | null;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text', nullable: true })
  namespace: string | null;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Column({ type: 'jsonb', nullable: true })
  extras: Record<string, unknown> | null;

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
