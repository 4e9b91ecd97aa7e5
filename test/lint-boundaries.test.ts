/**
 * The layer rules and the cycle rule bite: ESLint, with the repository's own config, lints in-memory files placed in
 * the tree and reports an upward import, an import between the two processes, and an import circle. Without these
 * probes a resolver that cannot find `.ts` files would make both rules pass silently (it once did).
 */
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot, runTs } from './helpers/run-node';

/**
 * An existing file of the tree with an import appended, so the type-aware project service knows the file (it refuses
 * a path it has never seen) while the content is in memory only.
 */
function withImport(file: string, importLine: string, used: string): { path: string; code: string } {
  const code = fs.readFileSync(path.join(repoRoot, file), 'utf8');
  return { path: file, code: `${code}\n${importLine}\n\nexport const lintProbe = ${used};\n` };
}

const PROBES = {
  upward: withImport('db/ids.ts', "import { NotFoundError } from '../api/http/errors';", 'NotFoundError'),
  acrossProcesses: withImport(
    'api/commands/budget.ts',
    "import { NonRetryableError } from '../../temporal/failures';",
    'NonRetryableError',
  ),
  workerToApi: withImport(
    'temporal/failures.ts',
    "import { NotFoundError } from '../api/http/errors';",
    'NotFoundError',
  ),
  down: withImport(
    'api/commands/budget.ts',
    "import { findRun } from '../../db/runs';\nimport { TERMINAL_RUN_STATUSES } from '../../domain/run';",
    '[findRun, TERMINAL_RUN_STATUSES]',
  ),
  // Inside api/: a presenter importing a route, a request schema importing a command, and a command importing a
  // schema (down: allowed).
  presenterToRoute: withImport(
    'api/presenters/workflow.ts',
    "import { listWorkflows } from '../routes/workflows';",
    'listWorkflows',
  ),
  schemaToCommand: withImport(
    'api/schemas/transcripts.ts',
    "import { getRunStatus } from '../commands/run-status/read';",
    'getRunStatus',
  ),
  commandToSchema: withImport(
    'api/commands/budget.ts',
    "import { runSearchQuery } from '../schemas/runs';",
    'runSearchQuery',
  ),
  // domain/run-state.ts imports a value from domain/run.ts; this version of run.ts imports run-state back.
  circle: withImport('domain/run.ts', "import { deriveOutcome } from './run-state';", 'deriveOutcome'),
};

describe('lint boundaries', () => {
  const reported: Record<keyof typeof PROBES, string[]> = {
    upward: [],
    acrossProcesses: [],
    workerToApi: [],
    down: [],
    presenterToRoute: [],
    schemaToCommand: [],
    commandToSchema: [],
    circle: [],
  };

  beforeAll(async () => {
    const names = Object.keys(PROBES) as (keyof typeof PROBES)[];
    const result = await runTs(
      'test/helpers/lint-probes.ts',
      [JSON.stringify(names.map((n) => PROBES[n]))],
      {},
      300_000,
    );
    expect(result.stderr).toBe('');
    const ids = JSON.parse(result.stdout) as string[][];
    names.forEach((name, i) => (reported[name] = ids[i] ?? []));
  }, 300_000);

  it('refuses an upward import: db/ importing the API', () => {
    expect(reported.upward).toContain('import-x/no-restricted-paths');
  });

  it('refuses an import between the processes: api/ importing the worker', () => {
    expect(reported.acrossProcesses).toContain('import-x/no-restricted-paths');
  });

  it('refuses the other way too: the worker importing the API', () => {
    expect(reported.workerToApi).toContain('import-x/no-restricted-paths');
  });

  it('accepts imports that flow down: api/ importing db/ and domain/', () => {
    expect(reported.down).toEqual([]);
  });

  it('refuses an upward import inside api/: a presenter importing a route, a request schema importing a command', () => {
    expect(reported.presenterToRoute).toContain('import-x/no-restricted-paths');
    expect(reported.schemaToCommand).toContain('import-x/no-restricted-paths');
  });

  it('accepts a downward import inside api/: a command importing a request schema', () => {
    expect(reported.commandToSchema).toEqual([]);
  });

  it('refuses an import circle: domain/run.ts importing the file that imports it', () => {
    expect(reported.circle).toContain('import-x/no-cycle');
  });
});
