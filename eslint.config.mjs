// Type-aware lint. The boundary rules keep the workflow sandbox deterministic: no Node builtins, no database driver,
// no activity *values* (types only) inside worker/workflows.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

export default tseslint.config(
  { ignores: ['node_modules/', '.stepwise/', 'dist/', 'coverage/', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/only-throw-error': 'off',
      'import-x/no-cycle': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through config.ts only.',
        },
      ],
    },
  },
  {
    files: ['config.ts', 'devstack/**', 'test/**', 'bench/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // db/ is below the runtimes: it may use the shared contract, never the API, Koa or the worker's code.
    files: ['db/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['koa', '@koa/*', '**/api/*', '**/api/**'], message: 'db/ does not know the API.' },
            {
              group: [
                '**/worker/actions/*',
                '**/worker/activities/*',
                '**/worker/activities/**',
                '**/worker/workflows/*',
                '**/worker/llm/*',
                '**/worker/tools/*',
                '**/worker/expressions/*',
              ],
              message: 'db/ may import only domain (shared types belong there).',
            },
          ],
        },
      ],
    },
  },
  {
    // The clients read the API through the client generated from the OpenAPI document (client/): its types are the
    // contract, never the server's own modules (docs/decisions/0302-clients-on-the-generated-types.md).
    files: ['cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(api|temporal|runtime)(/|$)',
              message: 'The CLI reads the API through client/ (generated types); the server code is not its contract.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['console/src/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./){2,}(api|db|temporal|runtime)(/|$)',
              message:
                'The console reads the API through client/ (generated types); the server code is not its contract.',
            },
          ],
        },
      ],
    },
  },
  {
    // The worker never imports the API process; what both need lives in shared/ or domain. One exception:
    // the run view's presenter (api/presenters/run-view), so a completion webhook's body is the status body itself
    // (docs/decisions/0301-run-view-schema-with-the-presenters.md).
    files: ['worker/**', 'shared/**'],
    ignores: ['worker/workflows/**', 'domain/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['koa', '@koa/*'], message: 'The worker does not import the API.' },
            {
              regex: '^(\\.{1,2}/)+api(/(?!presenters/run-view/)|$)',
              message: 'The worker does not import the API (only the run view presenter, api/presenters/run-view).',
            },
          ],
        },
      ],
    },
  },
  {
    // The run view presenter is shared with the worker: it stays pure API shape over storage reads, without Koa or the
    // API's routes, middleware and commands.
    files: ['api/presenters/run-view/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['koa', '@koa/*', '**/routes/*', '**/middleware/*', '**/commands/*', '**/commands/**'],
              message: 'The run view presenter is shared with the worker: no Koa, routes, middleware or commands.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['worker/workflows/**', 'domain/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflow code runs in the deterministic sandbox: no Node builtins.' },
            {
              group: ['mongodb', 'koa', '@koa/*', 'pino', 'nodemailer', 'ai', '@ai-sdk/*'],
              message: 'No I/O libraries in workflow code.',
            },
            {
              group: [
                '**/activities',
                '**/activities/*',
                '**/db/*',
                '**/api/*',
                '**/shared/*',
                '**/actions/*',
                '**/tools/*',
                '**/llm/*',
              ],
              message: 'Workflow code may import only domain (and activity types with `import type`).',
              allowTypeImports: true,
            },
          ],
          paths: ['fs', 'path', 'crypto', 'http', 'https', 'net', 'child_process', 'os'],
        },
      ],
    },
  },
);
