/**
 * docs/evals.md's Datasets manual runs as pasted: its curl examples, in order, in bash against the real API (on a
 * socket, with a worker), with only the address and the key swapped in. The command-line block is left out (the CLI
 * is proved by test/cli/datasets-e2e.test.ts). What the page's comments promise — the versions each change makes,
 * version 1 unchanged after an edit, the import's count, a bad line named — is checked on what the shell printed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './helpers/run-node';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from './helpers/stack';
import { createTestUser, type TestUser } from './helpers/users';

/** The shell blocks of the page's Datasets section, in order, without those that call the CLI. */
function datasetBlocks(markdown: string): string[] {
  const start = markdown.indexOf('## Datasets');
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).filter((b) => !b.includes('npm run'));
}

/** The shell block of the page's Replay section (it continues from the Datasets section's variables). */
function replayBlock(markdown: string): string {
  const start = markdown.indexOf('### Replay');
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(markdown.slice(start));
  if (start === -1 || !block) throw new Error('docs/evals.md has no Replay example');
  return block[1]!;
}

describe('docs/evals.md examples', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let dir: string;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    dir = await mkdtemp(path.join(tmpdir(), 'stepwise-evals-'));
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('run as pasted and print what the page says they print', async () => {
    const markdown = await readFile(path.join(repoRoot, 'docs/evals.md'), 'utf8');
    const blocks = [...datasetBlocks(markdown), replayBlock(markdown)];
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    const url = await api.listen();
    const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll('http://127.0.0.1:3000', url);
    const { stdout, stderr } = await promisify(execFile)('bash', ['--norc', '--noprofile', '-c', script], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: dir, KEY: user.key },
      timeout: 150_000,
    });
    // Each run ended completed (the status goes to stderr).
    expect(stderr.trim().split('\n')).toEqual(['completed', 'completed', 'completed']);
    // The search added the two newest runs (prices 3 and 2) as version 2.
    expect(stdout).toMatch(
      /"version":2,"item_count":4,"added":2,"items":\[\{[^\n]*"expected":\{"total":\{"total":3\}\}/,
    );
    const compact = stdout.replace(/\s+/g, '');
    // By id (version 3); the latest then; the edit (4); version 1 unchanged; the removal (5).
    expect(compact).toContain('{"version":3,"item_count":5}{"version":3,"item_count":5}');
    expect(compact).toContain('4{"total":{"total":6}}5');
    // The export of version 3 re-imported as five items; the bad line named, nothing written.
    expect(stdout).toContain('"version":1,"item_count":5,"added":5');
    expect(stdout).toContain('{"data":null,"error":"line 2: expectd: unknown field"}');
    const exported = (await readFile(path.join(dir, 'v3.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(exported).toHaveLength(5);
    expect(JSON.parse(exported[0]!)).toEqual({
      input: { order: { items: [{ price: 2 }, { price: 4 }] } },
      expected: { total: { total: 6 } },
      metadata: { case: 'two lines' },
    });
    // Replay: the unchanged workflow replayed every step (score 1, nothing spent); the new one ran only `label`.
    expect(compact).toContain('"spend":{"tokens":0,"model_calls":0},"summary":[{"name":"exact","mean":1,');
    expect(compact).toContain(
      '[{"step_id":"total","how":"replayed","changed":null},{"step_id":"label","how":"executed","changed":true,"recorded":null,"output":"big"}]',
    );
  }, 180_000);
});
