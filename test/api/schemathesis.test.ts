/**
 * Schemathesis, a third-party OpenAPI contract fuzzer, against the real API (real MongoDB, real Temporal): its
 * stateless phases (examples, coverage, fuzzing) and its stateful phase (chains of calls following the document's
 * links), once per user of two, each with its own API key while the other user's data is in the same database.
 * Bounded in examples and time (SCHEMATHESIS_* below). Any failure prints Schemathesis's own report. Checks left out
 * on purpose are named in docs/operations.md ("Contract fuzzing").
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureSchemathesis } from '../../devstack/install';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

// The run's bounds: with these the whole file takes about three minutes on a busy two-core machine. ST_SECONDS and
// ST_SEED look further by hand (the fuzzing phase repeats until its time is spent).
const MAX_EXAMPLES = 10;
const MAX_SECONDS = Number(process.env.ST_SECONDS ?? 150);
const SEED = process.env.ST_SEED ?? '1000';
/** Keeps generated schedule bodies to "end_at after start_at", which JSON Schema cannot state (see the file). */
const HOOKS = path.join(__dirname, 'schemathesis-hooks.py');

/**
 * Checks switched off for named operations, each for a reason docs/operations.md gives ("Contract fuzzing"). Everything else
 * runs everywhere with every check.
 */
const EXCEPTIONS: { path: string; method: string; check: string }[] = [
  // Rules over stored data or the registries that no request schema can state (the ones it can, such as action_type
  // only with step_type "action", map and loop never on one step, the built-in tool names, are in the document).
  // A template's step_type decides which other fields and which action config it takes; its output_schema must
  // compile.
  { path: '/api/v1/agents', method: 'POST', check: 'positive_data_acceptance' },
  // As above, checked merged with the stored template.
  { path: '/api/v1/agents/{id}', method: 'PATCH', check: 'positive_data_acceptance' },
  // A workflow's steps name stored templates and workflows and reference each other.
  { path: '/api/v1/workflows', method: 'POST', check: 'positive_data_acceptance' },
  // As above, for the changed definition.
  { path: '/api/v1/workflows/{id}', method: 'PATCH', check: 'positive_data_acceptance' },
  // A dataset made for a workflow checks each item's input against that workflow's stored input_schema.
  { path: '/api/v1/datasets/{id}/items', method: 'POST', check: 'positive_data_acceptance' },
  { path: '/api/v1/datasets/{id}/items/{itemId}', method: 'PATCH', check: 'positive_data_acceptance' },
  { path: '/api/v1/datasets/{id}/items/from-runs', method: 'POST', check: 'positive_data_acceptance' },
  // As above, and the JSONL text's lines are items: rules inside a string.
  { path: '/api/v1/datasets/{id}/items/import', method: 'POST', check: 'positive_data_acceptance' },
];

/**
 * Statuses that reject a request, beyond Schemathesis's own list: 413, a body over BODY_LIMIT_BYTES, refused before
 * anything else is read (a size the document cannot state in JSON Schema).
 */
const REJECTIONS = ['400', '401', '403', '404', '405', '406', '409', '413', '415', '422', '428', '429', '5xx'];
/** Statuses a valid request may get, beyond Schemathesis's own list: 413, as above. */
const ACCEPTABLE = ['2xx', '3xx', '401', '403', '404', '409', '413', '429', '5xx'];

/**
 * Every check of Schemathesis 4.32.5 (`st run --help`, `--checks`), each enabled by name in the config file: a
 * `--checks all` on the command line would also override the per-operation exceptions.
 */
const CHECKS: Record<string, string[]> = {
  not_a_server_error: [],
  status_code_conformance: [],
  content_type_conformance: [],
  response_headers_conformance: [],
  response_schema_conformance: [],
  negative_data_rejection: [`expected-statuses = ${JSON.stringify(REJECTIONS)}`],
  positive_data_acceptance: [`expected-statuses = ${JSON.stringify(ACCEPTABLE)}`],
  missing_required_header: [],
  unsupported_method: [],
  allow_header_conformance: [],
  use_after_free: [],
  ensure_resource_availability: [],
  ignored_auth: [],
  object_level_authorization: [],
};

/**
 * schemathesis.toml: two peers from the WFC auth file (neither may read the other's objects), the statuses above, and
 * the exceptions.
 */
function configToml(wfcPath: string): string {
  const lines = ['[auth.wfc]', `path = ${JSON.stringify(wfcPath)}`, 'peers = ["alice", "bob"]', ''];
  for (const [check, settings] of Object.entries(CHECKS))
    lines.push(`[checks.${check}]`, 'enabled = true', ...settings, '');
  for (const e of EXCEPTIONS) {
    lines.push(
      '[[operations]]',
      `include-path = ${JSON.stringify(e.path)}`,
      `include-method = ${JSON.stringify(e.method)}`,
      `checks.${e.check}.enabled = false`,
      '',
    );
  }
  return lines.join('\n');
}

interface StResult {
  code: number | null;
  output: string;
}

function runSchemathesis(st: string, args: string[], cwd: string): Promise<StResult> {
  return new Promise((resolve, reject) => {
    // In the throwaway folder: Schemathesis keeps a cache (.schemathesis/) in its working directory.
    const child = spawn(st, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_TELEMETRY: 'false', SCHEMATHESIS_HOOKS: HOOKS },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('Schemathesis against the real API', () => {
  let api: TestApi;
  let url: string;
  let users: TestUser[];
  let st: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-schemathesis-'));

  beforeAll(async () => {
    st = ensureSchemathesis(() => undefined);
    // Budgets high enough that the fuzzer's thousands of requests are never refused as too many.
    api = await startTestApi(
      testConfig({
        RATE_LIMIT_PER_MINUTE: '1000000',
        RATE_LIMIT_IP_PER_MINUTE: '1000000',
        RATE_LIMIT_RUNS_PER_MINUTE: '1000000',
      }),
    );
    url = await api.listen();
    users = [await createTestUser(api.database.db), await createTestUser(api.database.db)];
  });
  afterAll(async () => {
    await api?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds no response that disagrees with the OpenAPI document, with two users who must not see each other', async () => {
    const wfc = path.join(dir, 'auth.json');
    fs.writeFileSync(
      wfc,
      JSON.stringify({
        auth: ['alice', 'bob'].map((name, i) => ({
          name,
          fixedHeaders: [{ name: 'Authorization', value: `Bearer ${users[i]!.key}` }],
        })),
      }),
    );
    const config = path.join(dir, 'schemathesis.toml');
    fs.writeFileSync(config, configToml(wfc));
    const result = await runSchemathesis(
      st,
      [
        '--config-file',
        config,
        'run',
        `${url}/api/v1/openapi.json`,
        '--url',
        url,
        // Every check and the exceptions above come from the config file.
        '--phases',
        'examples,coverage,fuzzing,stateful',
        '--max-examples',
        String(MAX_EXAMPLES),
        '--max-time',
        String(MAX_SECONDS),
        '--seed',
        SEED,
        '--workers',
        '1',
        '--request-timeout',
        '30',
        '--report-dir',
        path.join(dir, 'reports'),
      ],
      dir,
    );
    if (result.code !== 0) throw new Error(`Schemathesis found problems (exit ${result.code}):\n${result.output}`);
  }, 600_000);
});
