/**
 * One suite against real servers: globalSetup starts Temporal and the MongoDB wire server on free loopback ports,
 * every test file gets its own database and task queue. The summary reporter prints "N passed, N failed" last.
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
    ],
  },
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  testTimeout: 60_000,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
