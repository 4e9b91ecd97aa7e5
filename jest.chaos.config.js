/**
 * `npm run test:chaos`: the slow reliability variants (files named *.chaos.ts under test/) on the same real servers as the suite.
 * `npm test` never picks these files up (its testMatch is *.test.ts).
 */
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = { ...base, testMatch: ['**/*.chaos.ts'], testTimeout: 600_000 };
