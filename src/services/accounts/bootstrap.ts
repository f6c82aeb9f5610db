import { isUniqueViolation, type Repositories } from '../../repositories';
import { generatePassword, hashPassword } from './credentials';

export const ADMIN_USERNAME = 'ocladmin';

/**
 * Makes sure the bootstrap superuser exists (design §5). On first start its password comes from
 * ADMIN_PASSWORD or is generated and returned so that the caller can print it once.
 * A later ADMIN_PASSWORD resets the password and reactivates the account.
 */
export async function ensureAdmin(
  repos: Repositories,
  adminPassword: string | undefined,
): Promise<{ created: boolean; generatedPassword?: string }> {
  const existing = await repos.users.findByUsername(ADMIN_USERNAME);
  if (existing) {
    if (adminPassword) {
      // ADMIN_PASSWORD is also the way back in: it restores a usable superuser account.
      existing.passwordHash = await hashPassword(adminPassword);
      Object.assign(existing, { isActive: true, isSuperuser: true, verified: true });
      await repos.users.save(existing);
    }
    return { created: false };
  }
  const generatedPassword = adminPassword ? undefined : generatePassword();
  try {
    await repos.users.insert({
      username: ADMIN_USERNAME,
      name: 'OCL Admin',
      email: 'admin@localhost',
      passwordHash: await hashPassword(adminPassword ?? (generatedPassword as string)),
      isSuperuser: true,
      verified: true,
      createdBy: ADMIN_USERNAME,
      updatedBy: ADMIN_USERNAME,
    });
  } catch (error) {
    // A process started at the same time created it first: theirs is the account (and the
    // generated password they print); ours then only applies ADMIN_PASSWORD, as on a later start.
    if (!isUniqueViolation(error)) throw error;
    return ensureAdmin(repos, adminPassword);
  }
  return { created: true, generatedPassword };
}
