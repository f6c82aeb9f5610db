import { ApiTokenEntity } from './api-token.entity';
import { ConceptEntity, ConceptVersionEntity } from './concept.entity';
import { MappingEntity, MappingVersionEntity } from './mapping.entity';
import { MembershipEntity } from './membership.entity';
import { OrganizationEntity } from './organization.entity';
import { RepositoryVersionEntity } from './repository-version.entity';
import { RepositoryEntity } from './repository.entity';
import { UserEntity } from './user.entity';
import { UrlRegistryEntryEntity } from './url-registry-entry.entity';

export {
  ApiTokenEntity,
  ConceptEntity,
  ConceptVersionEntity,
  MappingEntity,
  MappingVersionEntity,
  MembershipEntity,
  OrganizationEntity,
  RepositoryEntity,
  RepositoryVersionEntity,
  UserEntity,
  UrlRegistryEntryEntity,
};
export type { ConceptDescription, ConceptName } from './concept.entity';
export type { MemberRole } from './membership.entity';
export type { PublicAccess } from './organization.entity';
export { HEAD } from './repository-version.entity';
export type { RepositorySnapshot } from './repository-version.entity';
export type { AutoIdSettings, RepositoryKind } from './repository.entity';

export const entities = [
  UserEntity,
  ApiTokenEntity,
  OrganizationEntity,
  MembershipEntity,
  RepositoryEntity,
  RepositoryVersionEntity,
  ConceptEntity,
  ConceptVersionEntity,
  MappingEntity,
  MappingVersionEntity,
  UrlRegistryEntryEntity,
];
