const os = require('node:os');

/** Tests run on a real Postgres: embedded by default, TEST_DATABASE_URL when set (see test/setup). */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
  },
  module: { type: 'commonjs', ignoreDynamic: true },
};

/** ESM-only libraries (the OIDC client and what it builds on), compiled for Jest's CommonJS runtime. */
const ESM_PACKAGES = ['openid-client', 'oauth4webapi', 'jose'];
const swcJs = {
  jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' },
  module: { type: 'commonjs' },
};

/** What every project shares: the compilers, the environment, the time limit. */
const shared = {
  // Node, closing the apps a test file left open (test/setup/environment.ts).
  testEnvironment: '<rootDir>/test/setup/environment.ts',
  transform: { '^.+\\.ts$': ['@swc/jest', swc], '^.+\\.js$': ['@swc/jest', swcJs] },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_PACKAGES.join('|')})/)`],
  setupFiles: ['reflect-metadata'],
  testTimeout: 30000,
};

/**
 * The test pyramid, one Jest project a layer (`npm test` runs all three; `npm run test:quick` all
 * but e2e; `npm run test:services` the fast layer only):
 * - services: the services called directly, no HTTP;
 * - http: the app in-process, driven over HTTP (OCL REST, GraphQL, FHIR, the hostile inputs, OIDC);
 * - e2e: real server processes, killed and restarted (slow, ~20 s a file).
 * globalSetup/globalTeardown stay at the top level: one Postgres for the whole run, whatever
 * projects are selected (a project's own globalSetup would run once per project).
 */
module.exports = {
  // Two files at a time at least: a file keeps about one core busy between its app and PostgreSQL,
  // so on two cores a second worker cuts the run by about a third. Each worker has its own copy of
  // the database (test/setup/global-setup.ts). At most four, to keep a TEST_DATABASE_URL server
  // within PostgreSQL's default 100 connections (the embedded one allows 300).
  maxWorkers: Math.max(2, Math.min(os.availableParallelism(), 4)),
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 30000,
  projects: [
    {
      ...shared,
      displayName: 'services',
      roots: ['<rootDir>/test/services', '<rootDir>/test/jobs'],
      testMatch: ['**/*.test.ts'],
    },
    {
      ...shared,
      displayName: 'http',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/(services|jobs|e2e)/'],
    },
    {
      ...shared,
      displayName: 'e2e',
      roots: ['<rootDir>/test/e2e'],
      testMatch: ['**/*.test.ts'],
    },
  ],
};
