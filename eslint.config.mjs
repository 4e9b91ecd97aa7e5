// Type-aware lint. The boundary rules keep the layers in order (see the zones below and
// docs/decisions/0140-layered-tree.md) and the workflow sandbox deterministic: no Node builtins, no database driver,
// no activity *values* (types only) inside temporal/workflows. `import-x/no-cycle` refuses an import circle anywhere.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';

const TOOLING = ['./devstack', './bench', './test'];
const CLIENTS_AND_TOOLING = ['./cli', './client', './console', ...TOOLING];
const ABOVE_SHARED = ['./api', './temporal', ...CLIENTS_AND_TOOLING];
const ABOVE_DB = ['./shared', ...ABOVE_SHARED];
const ABOVE_CONFIG = ['./db', ...ABOVE_DB];
const ABOVE_DOMAIN = ['./config.ts', ...ABOVE_CONFIG];
// Inside api/: the folders a lower one may not import (see the api zones below).
const API_ABOVE_HANDLERS = ['./api/routes', './api/openapi', './api/mcp'];
const API_ABOVE_SCHEMAS = ['./api/presenters', './api/commands', ...API_ABOVE_HANDLERS];
const API_ABOVE_HTTP = ['./api/schemas', ...API_ABOVE_SCHEMAS];
const CLIENT_MESSAGE = 'Clients reach the server through the generated client (client/), not its code.';

/** One `import-x/no-restricted-paths` zone: files under `target` may not import from `from` (but `except`). */
function zone(target, from, message, except) {
  return { target, from, message, ...(except ? { except } : {}) };
}

export default tseslint.config(
  { ignores: ['node_modules/', '.stepwise/', 'dist/', 'coverage/', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: {
      // Without a resolver that knows .ts, import-x resolves no relative import and no-cycle finds nothing.
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs', '.cjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.d.ts', '.js', '.json', '.node'] })],
    },
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
    // A cancelled local activity can fail every workflow task of its run: temporal/workflows/local-activities.ts says why.
    files: ['temporal/workflows/**'],
    ignores: ['temporal/workflows/local-activities.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through config.ts only.',
        },
        {
          selector: "ImportSpecifier[imported.name='proxyLocalActivities']",
          message: 'Local activities go through uncancelledLocalActivities (./local-activities.ts): never cancel one.',
        },
      ],
    },
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
    // Layers, by resolved path (a relative specifier cannot dodge them). Imports flow one way:
    //   domain ← config.ts ← db ← shared ← (api | temporal) ← clients (cli, client, console);
    //   devstack/, bench/ and test/ are tooling above everything (test/ may import any layer).
    // api/ and temporal/ never import each other: what both need lives in shared/ or domain/.
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            zone('./domain', ABOVE_DOMAIN, 'domain/ is the pure bottom layer: it imports only itself.'),
            zone('./config.ts', ABOVE_CONFIG, 'config.ts imports no layer but the domain.'),
            zone('./db', ABOVE_DB, 'db/ may import only domain/ and config.ts.'),
            zone('./shared', ABOVE_SHARED, 'shared/ may import only db/, domain/ and config.ts.'),
            zone('./api', ['./temporal'], 'api/ does not import the worker process: move what both need down.'),
            zone('./api', CLIENTS_AND_TOOLING, 'api/ does not import clients or tooling.'),
            // Inside api/, bottom up: http/ (envelope, errors, paging, the caller) ← schemas/ (request schemas) ←
            // presenters/ and commands/ ← openapi/ (the document) and routes/. The entry files at api/'s root
            // (server, compose, deps, app, metrics) wire the rest together.
            zone(
              './api/http',
              API_ABOVE_HTTP,
              'api/http/ holds what every handler shares: it imports no API part above it.',
            ),
            zone('./api/schemas', API_ABOVE_SCHEMAS, 'Request schemas sit below routes, presenters and commands.'),
            zone('./api/presenters', API_ABOVE_HANDLERS, 'Presenters shape answers: they import no route or document.'),
            zone('./api/commands', API_ABOVE_HANDLERS, 'Commands are use cases: they import no route or document.'),
            zone('./temporal', ['./api'], 'temporal/ does not import the API process: move what both need down.'),
            zone('./temporal', CLIENTS_AND_TOOLING, 'temporal/ does not import clients or tooling.'),
            zone('./cli', ['./api', './temporal', './shared', ...TOOLING], 'cli/ talks to the API through client/.'),
            zone('./client', ['./temporal', './db', './shared', './cli', './console', ...TOOLING], CLIENT_MESSAGE),
            zone(
              './console',
              ['./api', './temporal', './db', './shared', './cli', './config.ts', ...TOOLING],
              CLIENT_MESSAGE,
            ),
            zone(
              './devstack',
              ['./api', './cli', './console', './bench', './test'],
              'devstack/ starts servers; it imports no process or client code.',
            ),
            zone('./bench', ['./cli', './console'], 'bench/ drives the API over HTTP, not the clients.'),
            zone(
              './types',
              ['./domain', './config.ts', './db', './shared', './api', './temporal', ...CLIENTS_AND_TOOLING],
              'types/ holds only ambient declarations.',
            ),
          ],
        },
      ],
    },
  },
  {
    // Below the processes: no web framework.
    files: ['domain/**', 'db/**', 'shared/**', 'temporal/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['koa', '@koa/*'], message: 'Only api/ uses Koa.' }] }],
    },
  },
  {
    // The workflow sandbox is deterministic: no Node builtins, no I/O libraries, activities as types only. domain/
    // holds what the sandbox shares with the rest, so the same rule applies to it.
    files: ['temporal/workflows/**', 'domain/**'],
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
                // domain/'s own action and tool declarations are domain: a domain file may derive from them.
                '!./actions/*',
                '!./tools/*',
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
