import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'text' })
  username: string;

  @Column({ name: 'password_hash', type: 'text', nullable: true })
  passwordHash: string | null;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  email: string;

  @Column({ name: 'first_name', type: 'text', nullable: true })
  firstName: string | null;

  @Column({ name: 'last_name', type: 'text', nullable: true })
  lastName: string | null;

  @Column({ type: 'text', nullable: true })
  company: string | null;

  @Column({ type: 'text', nullable: true })
  location: string | null;

  @Column({ name: 'preferred_locale', type: 'text', default: 'en' })
  preferredLocale: string;

  @Column({ type: 'text', nullable: true })
  website: string | null;

  @Column({ type: 'jsonb', nullable: true })
  extras: Record<string, unknown> | null;

  @Column({ name: 'is_superuser', type: 'boolean', default: false })
  isSuperuser: boolean;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive: boolean;

  /** False after signup until the emailed link is followed; login is refused meanwhile. */
  @Column({ type: 'boolean', default: true })
  verified: boolean;

  @Column({ name: 'verification_token_hash', type: 'text', nullable: true })
  verificationTokenHash: string | null;

  @Column({ name: 'verify_success_url', type: 'text', nullable: true })
  verifySuccessUrl: string | null;

  @Column({ name: 'verify_failure_url', type: 'text', nullable: true })
  verifyFailureUrl: string | null;

  /** Requests per minute allowed to this user, set by an administrator; null: the instance's. */
  @Column({ name: 'rate_limit_per_minute', type: 'integer', nullable: true })
  rateLimitPerMinute: number | null;

  /** Requests per day allowed to this user, set by an administrator; null: the instance's. */
  @Column({ name: 'rate_limit_per_day', type: 'integer', nullable: true })
  rateLimitPerDay: number | null;

  /** Approved by an administrator for `$match` (spec operations §5.1). */
  @Column({ name: 'match_approved', type: 'boolean', default: false })
  matchApproved: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy: string | null;

  @Column({ name: 'updated_by', type: 'text', nullable: true })
  updatedBy: string | null;
}
