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

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc], '^.+\\.js$': ['@swc/jest', swcJs] },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_PACKAGES.join('|')})/)`],
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  setupFiles: ['reflect-metadata'],
  testTimeout: 30000,
};
