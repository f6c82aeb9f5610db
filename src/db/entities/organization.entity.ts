import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

export type PublicAccess = 'View' | 'Edit' | 'None';

@Entity({ name: 'organizations' })
export class OrganizationEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  /** The org identifier used in URLs (`/orgs/:org/`); never changes. */
  @Column({ type: 'text' })
  mnemonic: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', nullable: true })
  company: string | null;

  @Column({ type: 'text', nullable: true })
  website: string | null;

  @Column({ type: 'text', nullable: true })
  location: string | null;

  @Column({ name: 'public_access', type: 'text', default: 'View' })
  publicAccess: PublicAccess;

  @Column({ type: 'jsonb', nullable: true })
  extras: Record<string, unknown> | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy: string | null;

  @Column({ name: 'updated_by', type: 'text', nullable: true })
  updatedBy: string | null;
}
