import { addMember, createOrg, createUser, type TestApp, type TestUser } from './index';

/** An org and the three kinds of people a rights test needs. */
export interface OrgWithPeople {
  org: { id: string };
  /** Created the org, so its administrator. */
  admin: TestUser;
  /** A plain member of the org. */
  member: TestUser;
  /** Signed in, but no member of the org. */
  outsider: TestUser;
}

/**
 * A fresh org (of `fields`) with an administrator, a plain member and an outsider, each a fresh
 * user; the administrator is `options.admin` when given (a test that needs certain fields of it
 * makes that user first).
 */
export async function orgWithPeople(
  t: TestApp,
  fields: Record<string, unknown> = {},
  options: { admin?: TestUser } = {},
): Promise<OrgWithPeople> {
  const admin = options.admin ?? (await createUser(t));
  const member = await createUser(t);
  const outsider = await createUser(t);
  const org = await createOrg(t, admin, fields);
  await addMember(t, org.id, admin, member);
  return { org, admin, member, outsider };
}
