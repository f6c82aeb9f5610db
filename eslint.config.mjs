// @ts-check
import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** Layering (design §3): edges → services → repositories → db; nothing in src/ reaches into compat/. */
const layering = [
  {
    target: './compat',
    from: [
      './src/jobs',
      './src/repositories',
      './src/db/data-source.ts',
      './src/db/database.ts',
      './src/db/migrations',
    ],
    message: 'Edges call services; only repositories query the database.',
  },
  {
    target: './src/graphql',
    from: [
      './src/jobs',
      './src/repositories',
      './src/db/data-source.ts',
      './src/db/database.ts',
      './src/db/migrations',
    ],
    message: 'Edges call services; only repositories query the database.',
  },
  {
    target: './src/services',
    from: [
      './src/graphql',
      './compat',
      './src/app.ts',
      './src/db/data-source.ts',
      './src/db/migrations',
    ],
    message: 'Services know nothing of the edges.',
  },
  {
    target: './src/services/shared',
    from: [
      './src/services/accounts',
      './src/services/collections',
      './src/services/community',
      './src/services/content',
      './src/services/matching',
      './src/services/terminology',
      './src/services/transfer',
      './src/services/index.ts',
    ],
    message: 'services/shared holds what every domain uses; it depends on no domain.',
  },
  {
    target: './src/services/accounts',
    from: [
      './src/services/collections',
      './src/services/content',
      './src/services/matching',
      './src/services/terminology',
      './src/services/transfer',
    ],
    message: 'Accounts (users, orgs, sign-in) depend on no content domain.',
  },
  {
    target: [
      './src/services/accounts',
      './src/services/collections',
      './src/services/community',
      './src/services/content',
    ],
    from: ['./src/services/matching', './src/services/terminology', './src/services/transfer'],
    message:
      'Matching, terminology (FHIR) and transfer (imports, exports) sit on top of the other domains; only the composition root wires them.',
  },
  {
    target: './src/jobs',
    from: [
      './src/services',
      './src/graphql',
      './compat',
      './src/app.ts',
      './src/context.ts',
      './src/db/data-source.ts',
      './src/db/database.ts',
      './src/db/migrations',
    ],
    message:
      'Jobs sit beside services: they reach repositories only; handlers are registered by the composition root.',
  },
  {
    target: './src/repositories',
    from: ['./src/services', './src/jobs', './src/graphql', './compat'],
    message: 'Repositories only query.',
  },
  {
    target: './src/db',
    from: ['./src/services', './src/jobs', './src/repositories', './src/graphql', './compat'],
    message: 'The database layer depends on nothing of ours.',
  },
  {
    target: [
      './src/services',
      './src/jobs',
      './src/repositories',
      './src/db',
      './src/graphql',
      './src/context.ts',
    ],
    from: './compat',
    message: 'src/ never imports compat/ (only the composition root src/app.ts mounts it).',
  },
  {
    target: './compat/rest',
    from: './compat/fhir',
    message: 'REST and FHIR share only compat/http/.',
  },
  {
    target: './compat/fhir',
    from: './compat/rest',
    message: 'REST and FHIR share only compat/http/.',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.data/**',
      'coverage/**',
      'scripts/*.js',
      // The test identity provider runs as plain ESM in a child process (test/oidc/provider.ts).
      'test/oidc/*.mjs',
      'jest.config.js',
      'eslint.config.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver': { typescript: true, node: true } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      'import-x/no-default-export': 'error',
      'import-x/no-restricted-paths': ['error', { zones: layering }],
      'no-restricted-imports': 'off',
    },
  },
  {
    files: ['src/services/**/*.ts', 'src/jobs/**/*.ts', 'src/repositories/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: ['express', 'graphql', 'type-graphql', 'graphql-shield', '@apollo/server'] },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // jest loads its global setup and teardown as default exports.
    files: ['test/setup/*.ts'],
    rules: { 'import-x/no-default-export': 'off' },
  },
);
