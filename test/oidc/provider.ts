import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export const CLIENT_ID = 'oclweb';
export const CLIENT_SECRET = 'a-secret-only-the-server-knows';
export const REDIRECT_URI = 'http://127.0.0.1:4002/callback';
export const POST_LOGOUT_REDIRECT_URI = 'http://127.0.0.1:4002/';

export interface TestProvider {
  issuer: string;
  /** The settings that point the service at this provider. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** The provider's script, beside this file's source (also when the benchmarks run it from dist/). */
const SCRIPT = path.join(
  __dirname.replace(/[\\/]dist(?=[\\/]test[\\/])/, ''),
  'provider-process.mjs',
);

/** Starts the real provider of `provider-process.mjs` in a child process and waits until it listens. */
export async function startProvider(clientId = CLIENT_ID): Promise<TestProvider> {
  const child = spawn(process.execPath, [SCRIPT], {
    env: {
      ...process.env,
      CLIENT_ID: clientId,
      CLIENT_SECRET,
      REDIRECT_URI,
      POST_LOGOUT_REDIRECT_URI,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const issuer = await firstIssuerLine(child);
  return {
    issuer,
    env: { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: CLIENT_SECRET },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

function firstIssuerLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`provider exited (${code}): ${errors}`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{')) resolve((JSON.parse(line) as { issuer: string }).issuer);
    });
  });
}

/**
 * A browser as far as the provider can tell: it keeps cookies, follows redirects and answers
 * the provider's sign-in and consent pages as a person would, until the provider sends it back
 * to `redirectUri`; that address (with the code) is the result.
 */
export async function signInAtProvider(
  authorizationUrl: string,
  login: string,
  redirectUri = REDIRECT_URI,
): Promise<URL> {
  const cookies = new Map<string, string>();
  let url = new URL(authorizationUrl);
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step += 1) {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form?.toString(),
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    form = undefined;
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url);
      if (url.href.startsWith(redirectUri)) return url;
      continue;
    }
    const page = await res.text();
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
    if (res.status !== 200 || !prompt) {
      throw new Error(`provider answered ${res.status} at ${url.href}: ${page.slice(0, 500)}`);
    }
    form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'x' } : { prompt });
  }
  throw new Error('the provider never sent the browser back');
}
