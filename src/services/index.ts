import type { DataSource } from 'typeorm';
import type { Logger } from '../logger';
import { Repositories } from '../repositories';
import { AuthService } from './auth.service';
import { ConceptService } from './concept.service';
import { MappingService } from './mapping.service';
import { ensureAdmin } from './bootstrap';
import type { Actor, ServiceContext } from './context';
import { createLoaders } from './loaders';
import type { Mailer } from './mailer';
import { OrgService } from './org.service';
import { RepositoryService } from './repository.service';
export { refOf } from './repository.service';
import { UserService } from './user.service';

export { ANONYMOUS } from './context';
export type { Actor, ServiceContext } from './context';
export { isAuthenticated, isSuperuser } from './access';
export { ADMIN_USERNAME } from './bootstrap';
export { createMailer } from './mailer';
export { extraOf, withExtra, withoutExtra } from './extras';
export type { Mail, Mailer } from './mailer';
export { DEFAULT_LIMIT, defaultListParams } from './list';
export type { ListParams, Page } from './list';
export type { ExtrasCondition, ExtrasFilter, OrgCounts, UserCounts } from '../repositories';
export type { Owner, RepoCounts, RepoScope, RepoView } from './repository.service';
export type { ConceptView, EditMode } from './concept.service';
export type { MappingView, ResolvedEnd } from './mapping.service';
export {
  ownerUrl,
  parseConceptUrl,
  parseMappingUrl,
  parseOwnerUrl,
  parseRepoUrl,
  repoUrl,
} from './urls';
export type { ConceptRef, MappingRef, OwnerRef, RepoRef } from './urls';

/** Every service, wired once per process and shared by all three edges. */
export class Services {
  private readonly repos: Repositories;
  readonly users: UserService;
  readonly orgs: OrgService;
  readonly auth: AuthService;
  readonly repositories: RepositoryService;
  readonly concepts: ConceptService;
  readonly mappings: MappingService;

  constructor(dataSource: DataSource, mailer: Mailer) {
    this.repos = Repositories.of(dataSource);
    this.users = new UserService(this.repos, mailer);
    this.orgs = new OrgService(this.repos, this.users);
    this.auth = new AuthService(this.repos, this.users);
    this.repositories = new RepositoryService(this.repos, this.users, this.orgs);
    this.concepts = new ConceptService(this.repos, this.repositories);
    this.mappings = new MappingService(this.repos, this.repositories);
  }

  /** Creates the bootstrap superuser on first start; see `ensureAdmin`. */
  ensureAdmin(adminPassword: string | undefined): ReturnType<typeof ensureAdmin> {
    return ensureAdmin(this.repos, adminPassword);
  }

  /** Fails when the database does not answer. */
  ping(): Promise<void> {
    return this.repos.ping();
  }

  /** A fresh context for one request: the actor and new per-request loaders. */
  context(actor: Actor, log: Logger, baseUrl: string): ServiceContext {
    return { actor, loaders: createLoaders(this.repos, actor), log, baseUrl };
  }
}
