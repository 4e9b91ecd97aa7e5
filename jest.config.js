/**
 * One suite against real servers: globalSetup starts Temporal and the MongoDB wire server on free loopback ports,
 * every test file gets its own database and task queue. The summary reporter prints "N passed, N failed" last.
 * `npm test` runs the files one at a time (`--maxWorkers=1`) in a worker process that is replaced once its heap
 * passes workerIdleMemoryLimit: in one long-lived process (`--runInBand`) the heap grew to about 2 GB by the last
 * files, and its collections slowed the API, worker and Temporal worker those files run in-process.
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
  workerIdleMemoryLimit: '1GB',
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
