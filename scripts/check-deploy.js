#!/usr/bin/env node
// Checks docker-compose.yml without Docker (issue 24 part 9): starts every app service of the
// file (those built from the Dockerfile) with the Dockerfile's command and the service's own
// environment, and runs each service's healthcheck until it passes.
//
// What stands in for what Docker would run:
//   - the `db` service (postgres image): an embedded Postgres started here, database `registry`;
//   - the `minio` service and its bucket-creating init step: s3rver (S3-compatible), with the
//     bucket the init step names;
//   - the `appdata` volume: one temporary folder every app service gets as DATA_DIR;
//   - the image: the server built with tsc into a temporary folder (`dist/` of the CMD).
// Each app service listens on a free port of 127.0.0.1 (inside Docker they all use 8000), and
// its healthcheck's `:8000` is pointed there (a METRICS_PORT it is given: another free port).
// Not checked: the image build itself, the Postgres and MinIO images and their healthchecks,
// `mc`, published ports, restart policies.
//
// Usage: node scripts/check-deploy.js   (exit code 0 when every healthcheck passed)
'use strict';
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const yaml = require('js-yaml');
const S3rver = require('s3rver');
const { Client } = require('pg');

const root = path.resolve(__dirname, '..');
const compose = yaml.load(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'));
const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');

const log = (message) => process.stdout.write(`check-deploy: ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `${NAME:-default}`, `${NAME:+replacement}` and `${NAME}` as compose reads them, from this shell's
 * environment.
 */
function interpolate(value) {
  return String(value)
    .replace(/\$\{(\w+):-([^}]*)\}/g, (_m, name, fallback) => process.env[name] || fallback)
    .replace(/\$\{(\w+):\+([^}]*)\}/g, (_m, name, replacement) =>
      process.env[name] ? replacement : '',
    )
    .replace(/\$\{(\w+)\}/g, (_m, name) => process.env[name] ?? '')
    .replace(/\$\$/g, '$');
}

function environmentOf(service) {
  const env = service.environment ?? {};
  const entries = Array.isArray(env)
    ? env.map((line) => line.split(/=(.*)/s))
    : Object.entries(env);
  return Object.fromEntries(entries.map(([name, value]) => [name, interpolate(value ?? '')]));
}

/** Compose durations (`10s`, `1m30s`) in milliseconds. */
function msOf(duration, fallback) {
  if (!duration) return fallback;
  let ms = 0;
  for (const [, n, unit] of String(duration).matchAll(/(\d+)(ms|s|m|h)/g)) {
    ms += Number(n) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit];
  }
  return ms;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const cmd = JSON.parse(/^CMD\s+(\[.*\])\s*$/m.exec(dockerfile)[1]);
const appServices = Object.entries(compose.services).filter(([, s]) => s.build);
const bucket = /local\/([\w.-]+)/.exec(JSON.stringify(compose.services['minio-init'] ?? {}))?.[1];

async function main() {
  const cleanups = [];
  const children = [];
  let failed = false;
  try {
    const cache = path.join(root, 'node_modules', '.cache');
    fs.mkdirSync(cache, { recursive: true });
    const buildDir = fs.mkdtempSync(path.join(cache, 'check-deploy-'));
    cleanups.push(() => fs.rmSync(buildDir, { recursive: true, force: true }));
    log("building the server (the image's dist/)");
    execFileSync(
      process.execPath,
      [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', buildDir],
      { cwd: root, stdio: 'inherit' },
    );

    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'check-deploy-'));
    fs.chmodSync(work, 0o755);
    cleanups.push(() => fs.rmSync(work, { recursive: true, force: true }));
    const { startEmbeddedPostgres } = require(
      path.join(buildDir, 'src', 'db', 'embedded-postgres.js'),
    );
    log('starting an embedded Postgres for the `db` service');
    const pg = await startEmbeddedPostgres({ dataDir: path.join(work, 'pg') });
    cleanups.unshift(() => pg.stop());
    const admin = new Client({ connectionString: pg.url });
    await admin.connect();
    await admin.query('CREATE DATABASE registry');
    await admin.end();
    const databaseUrl = pg.url.replace(/\/postgres$/, '/registry');

    let s3Endpoint;
    if (bucket) {
      log(`starting s3rver for the \`minio\` service, with the bucket '${bucket}'`);
      const s3Dir = path.join(work, 's3');
      fs.mkdirSync(s3Dir);
      const s3 = new S3rver({
        address: '127.0.0.1',
        port: 0,
        silent: true,
        directory: s3Dir,
        configureBuckets: [{ name: bucket }],
      });
      s3Endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
      cleanups.unshift(() => s3.close());
    }
    const appData = path.join(work, 'appdata');
    fs.mkdirSync(appData);

    for (const [name, service] of appServices) {
      const env = environmentOf(service);
      const port = await freePort();
      const overrides = {
        DATABASE_URL: databaseUrl,
        DATA_DIR: appData,
        PORT: String(port),
        HOST: '127.0.0.1',
        ...(env.METRICS_PORT ? { METRICS_PORT: String(await freePort()) } : {}),
        ...(env.EXPORT_S3_ENDPOINT && s3Endpoint
          ? {
              EXPORT_S3_ENDPOINT: s3Endpoint,
              AWS_ACCESS_KEY_ID: 'S3RVER',
              AWS_SECRET_ACCESS_KEY: 'S3RVER',
            }
          : {}),
      };
      const childEnv = { ...process.env, NODE_ENV: 'production', ...env, ...overrides };
      const [program, ...args] = cmd.map((part) => part.replace(/^dist\//, `${buildDir}/`));
      log(
        `starting ${name}: ${[program, ...args.map((a) => path.relative(root, a))].join(' ')} (port ${port})`,
      );
      const child = spawn(program === 'node' ? process.execPath : program, args, {
        cwd: root,
        env: childEnv,
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      children.push(child);

      const check = service.healthcheck ?? {};
      const test = Array.isArray(check.test) ? check.test : ['CMD-SHELL', check.test];
      const [kind, ...argv] = test.map((part) => String(part).replace(/:8000\b/g, `:${port}`));
      const interval = msOf(check.interval, 30_000);
      const deadline =
        Date.now() + msOf(check.start_period, 0) + interval * (check.retries ?? 3) + 30_000;
      let healthy = false;
      while (!healthy && Date.now() < deadline && child.exitCode === null) {
        const run =
          kind === 'CMD'
            ? spawnSync(argv[0] === 'node' ? process.execPath : argv[0], argv.slice(1), {
                cwd: root,
                env: childEnv,
                timeout: msOf(check.timeout, 30_000),
              })
            : spawnSync('/bin/sh', ['-c', argv.join(' ')], { cwd: root, env: childEnv });
        healthy = run.status === 0;
        if (!healthy) await sleep(Math.min(interval, 2000));
      }
      if (healthy) log(`${name}: healthcheck passed`);
      else {
        failed = true;
        log(
          `${name}: healthcheck FAILED${child.exitCode !== null ? ` (exited with ${child.exitCode})` : ''}\n${output.slice(-3000)}`,
        );
      }
    }
  } catch (error) {
    failed = true;
    log(`failed: ${error?.stack ?? error}`);
  } finally {
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', resolve);
            child.kill('SIGTERM');
          }),
      ),
    );
    for (const cleanup of cleanups) {
      try {
        await cleanup();
      } catch (error) {
        log(`cleanup: ${error}`);
      }
    }
  }
  log(failed ? 'FAILED' : 'every app service of docker-compose.yml passed its healthcheck');
  process.exit(failed ? 1 : 0);
}

void main();
