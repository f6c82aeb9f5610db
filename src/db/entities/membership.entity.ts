import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type MemberRole = 'admin' | 'member';

@Entity({ name: 'org_memberships' })
export class MembershipEntity {
  @PrimaryColumn({ name: 'org_id', type: 'bigint' })
  orgId: string;

  @PrimaryColumn({ name: 'user_id', type: 'bigint' })
  userId: string;

  @Column({ type: 'text', default: 'member' })
  role: MemberRole;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
