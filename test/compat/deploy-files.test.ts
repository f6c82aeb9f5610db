import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { loadConfig } from '../../src/config';

/**
 * docker-compose.yml cannot drift from the configuration (issue 24 part 9): every variable an
 * app service sets is one src/config.ts reads (or one a library reads, listed here), and the
 * settings each service is given, with its defaults, pass the configuration's own validation.
 */
const root = path.resolve(__dirname, '..', '..');
/** Read by libraries rather than by the app's schema. */
const LIBRARY_SETTINGS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'NODE_ENV'];

interface Service {
  build?: unknown;
  environment?: Record<string, string | number | boolean> | string[];
  healthcheck?: { test?: string[] | string };
}

const compose = yaml.load(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
};
const appServices = Object.entries(compose.services).filter(([, service]) => service.build);

/**
 * A service's environment as compose reads it with the shell's variables `shell` (none: every
 * `${NAME:-default}` is its default, every `${NAME:+replacement}` empty).
 */
function environmentOf(
  service: Service,
  shell: Record<string, string> = {},
): Record<string, string> {
  const entries = Array.isArray(service.environment)
    ? service.environment.map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string])
    : Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v)] as const);
  return Object.fromEntries(
    entries.map(([name, value]) => [
      name,
      (value ?? '')
        .replace(/\$\{(\w+):-([^}]*)\}/g, (_m, v: string, fallback: string) => shell[v] || fallback)
        .replace(/\$\{(\w+):\+([^}]*)\}/g, (_m, v: string, then: string) => (shell[v] ? then : ''))
        .replace(/\$\{(\w+)\}/g, (_m, v: string) => shell[v] ?? ''),
    ]),
  );
}

/** The names src/config.ts's schema reads (its `NAME: z.` lines). */
const configured = new Set(
  [
    ...fs
      .readFileSync(path.join(root, 'src', 'config.ts'), 'utf8')
      .matchAll(/^ {2}([A-Z0-9_]+): z\s*\./gm),
  ].map((match) => match[1]),
);

test('the schema is read (the check below is not vacuous)', () => {
  expect(configured).toContain('DATABASE_URL');
  expect(configured).toContain('EXPORT_S3_BUCKET');
  expect(appServices.map(([name]) => name)).toEqual(['api-1', 'api-2', 'worker']);
});

describe.each(appServices)('service %s', (_name, service) => {
  const env = environmentOf(service);

  it('sets only settings src/config.ts (or a library) reads', () => {
    const unknown = Object.keys(env).filter(
      (name) => !configured.has(name) && !LIBRARY_SETTINGS.includes(name),
    );
    expect(unknown).toEqual([]);
  });

  it('is a valid configuration, with exports in the shared bucket', () => {
    const config = loadConfig(env);
    expect(config.databaseUrl).toBeDefined();
    expect(config.services.exportStorage).toMatchObject({ kind: 's3', forcePathStyle: true });
  });

  it('has a healthcheck', () => {
    expect(service.healthcheck?.test).toBeDefined();
  });
});

test('the API replicas run no tasks, the worker runs them without a listener', () => {
  const byName = Object.fromEntries(
    appServices.map(([name, service]) => [name, loadConfig(environmentOf(service))]),
  );
  for (const api of ['api-1', 'api-2']) {
    expect(byName[api]).toMatchObject({ role: 'server', jobsWorkers: 0 });
    expect(JSON.stringify(compose.services[api].healthcheck)).toContain('/readyz/');
  }
  expect(byName.worker.role).toBe('worker');
  expect(byName.worker.jobsWorkers).toBeGreaterThan(0);
});

test('with METRICS_TOKEN set, the worker serves /metrics on a port of its own; the API replicas on theirs', () => {
  const shell = { METRICS_TOKEN: 'a-metrics-token-of-16+' };
  const byName = Object.fromEntries(
    appServices.map(([name, service]) => [name, loadConfig(environmentOf(service, shell))]),
  );
  expect(byName.worker).toMatchObject({ metricsToken: shell.METRICS_TOKEN, metricsPort: 9100 });
  for (const api of ['api-1', 'api-2']) {
    expect(byName[api]).toMatchObject({
      metricsToken: shell.METRICS_TOKEN,
      metricsPort: undefined,
    });
  }
  // Unset, no process serves metrics (and the worker is not refused for a port without a token).
  expect(loadConfig(environmentOf(compose.services.worker)).metricsPort).toBeUndefined();
});
