import { hash, verify } from '@node-rs/argon2';
import crypto from 'node:crypto';

/** Passwords: argon2id with the library's recommended parameters. */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/**
 * Whether `password` matches `passwordHash`. Without a hash (an unknown user, an account without
 * a password) the password is checked against a throwaway hash all the same and refused, so that
 * the time taken does not tell which usernames exist.
 */
export async function verifyPassword(
  passwordHash: string | null | undefined,
  password: string,
): Promise<boolean> {
  try {
    if (!passwordHash) {
      await verify(await dummyHash(), password);
      return false;
    }
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/** A hash of a random secret, made with the same parameters as real ones (once per process). */
export function dummyHash(): Promise<string> {
  dummy ??= hash(crypto.randomBytes(32).toString('hex'));
  return dummy;
}

/**
 * A random secret (API token, email-verification token): 160 bits as 40 hex characters, the
 * shape OCL clients expect. Only its SHA-256 is stored; high entropy makes a slow hash pointless.
 */
export function newSecret(): { secret: string; hash: string } {
  const secret = crypto.randomBytes(20).toString('hex');
  return { secret, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): string {
  return crypto.createHash('sha256').update(secret).digest('hex');
}

/** A strong generated password for the bootstrap administrator. */
export function generatePassword(): string {
  return crypto.randomBytes(18).toString('base64url');
}
