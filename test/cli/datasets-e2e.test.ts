/**
 * `datasets …` end to end: the CLI (in-process, as the entrypoint runs it) against the real API on a socket, with a
 * real worker: create for a workflow, add-from-runs by search and by id, export a version to a file, import it into a
 * second dataset, get at a version, list, delete; a bad JSONL line and a bad flag are errors a person can act on.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config';
import { runCli } from '../../cli/run';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('CLI datasets against the real API', () => {
  let g: GraphStack;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    g = await startGraphStack();
    url = await g.api.listen();
    dir = await mkdtemp(path.join(tmpdir(), 'stepwise-datasets-'));
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const cli = async (...args: string[]) => {
    const config = loadConfig({ STEPWISE_URL: url, STEPWISE_API_KEY: g.user.key });
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, config, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  };

  it('create, add-from-runs, export, import, get at a version, list, delete', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('cli-ds'),
      steps: [{ id: 'double', template_id: g.tpl.transform._id, config: { expression: '$ * 2', data: '{{input.n}}' } }],
    });
    const runs: string[] = [];
    for (const n of [1, 2, 3]) {
      const run = await startRun(g.api, g.user, wf, { n });
      expect((await waitForStatus(g.api, g.user, run, isTerminal)).status).toBe('completed');
      runs.push(run);
    }

    const name = uniqueId('golden-');
    const created = await cli('datasets', 'create', name, '--workflow', wf, '--description', 'doubling');
    expect(created.code).toBe(0);
    const [id, shownName, version] = created.out[0]!.split('\t');
    expect([shownName, version]).toEqual([name, 'version 0']);

    const searched = await cli('datasets', 'add-from-runs', id!, '--workflow', wf, '--limit', '2');
    expect(searched.code).toBe(0);
    expect(searched.out[0]).toBe(`${id}\tversion 1\t+2 items\t2 items`);
    expect(searched.out.slice(1).map((l) => l.split('\t')[1])).toEqual([runs[2], runs[1]]);
    const byId = await cli('datasets', 'add-from-runs', id!, runs[0]!);
    expect(byId.out[0]).toBe(`${id}\tversion 2\t+1 items\t3 items`);

    const file = path.join(dir, 'v1.jsonl');
    const exported = await cli('datasets', 'export', id!, '--version', '1', '--out', file);
    expect(exported.code).toBe(0);
    expect(exported.err.join('\n')).toContain('2 items of version 1');
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { expected: unknown }).expected)).toEqual([{ double: 6 }, { double: 4 }]);
    const stdout = await cli('datasets', 'export', id!, '--version', '1');
    expect(stdout.out).toEqual(lines);

    const copy = (await cli('datasets', 'create', uniqueId('copy-'))).out[0]!.split('\t')[0]!;
    const imported = await cli('datasets', 'import', copy, file);
    expect(imported.code).toBe(0);
    expect(imported.out).toEqual([`${copy}\tversion 1\t+2 items\t2 items`]);

    const got = await cli('datasets', 'get', id!, '--version', '1');
    expect(got.code).toBe(0);
    expect(got.out[0]).toBe(`${id}\t${name}\tversion 2\t3 items\t${wf}`);
    expect(got.out[1]).toMatch(/^ITEM\s+SINCE\s+SOURCE RUN\s+INPUT\s+EXPECTED$/);
    expect(got.out.slice(2).map((l) => l.split(/\s{2,}/)[2])).toEqual([runs[2], runs[1]]);

    const listed = await cli('datasets', 'list', '--json');
    expect(listed.out.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(expect.arrayContaining([id, copy]));

    expect((await cli('datasets', 'delete', copy)).out).toEqual([`${copy}\tdeleted`]);
    const gone = await cli('datasets', 'get', copy);
    expect(gone.code).not.toBe(0);
    expect(gone.err.join('\n')).toContain('not found');
  }, 120_000);

  it('reports a bad JSONL line by number, and a bad flag, without writing', async () => {
    const id = (await cli('datasets', 'create', uniqueId('bad-'))).out[0]!.split('\t')[0]!;
    const file = path.join(dir, 'bad.jsonl');
    await writeFile(file, '{"input": {"a": 1}}\n{"input": 2}\n');
    const refused = await cli('datasets', 'import', id, file);
    expect(refused.code).not.toBe(0);
    expect(refused.err.join('\n')).toContain('line 2');
    const status = await cli('datasets', 'add-from-runs', id, '--status', 'running');
    expect(status.code).not.toBe(0);
    expect(status.err.join('\n')).toContain('--status');
    expect((await cli('datasets', 'get', id)).out[0]).toContain('version 0');
  });
});
