/**
 * `runs start|get|cancel`, `workflows list` and `agents list` end to end: the CLI (in-process, as the entrypoint runs
 * it) against the real API on a socket, with a real worker and Temporal. Lists follow the API's `Link` cursor past
 * its largest page (200).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config';
import { runCli } from '../../cli/run';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, insertTemplate, isTerminal, waitForStatus } from '../helpers/workflows';

describe('CLI runs start/get/cancel, workflows list, agents list against the real API', () => {
  let g: GraphStack;
  let url: string;

  beforeAll(async () => {
    g = await startGraphStack();
    url = await g.api.listen();
  }, 60_000);
  afterAll(() => g?.stop());

  const cli = async (...args: string[]) => {
    const config = loadConfig({ STEPWISE_URL: url, STEPWISE_API_KEY: g.user.key });
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, config, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  };
  const json = <T>(lines: string[]): T[] => lines.map((l) => JSON.parse(l) as T);

  it('runs start (input, idempotency key, --watch), runs get, in text and JSON', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('cli-start'),
      config: { input_schema: { type: 'object', required: ['n'], properties: { n: { type: 'number' } } } },
      steps: [{ id: 'double', template_id: g.tpl.transform._id, config: { expression: 'n * 2', data: '{{input}}' } }],
    });
    const key = uniqueId('idem');
    const started = await cli('runs', 'start', wf, '--input', '{"n":21}', '--idempotency-key', key);
    expect(started.code).toBe(0);
    expect(started.out).toHaveLength(1);
    const runId = started.out[0]!;
    expect(runId).toMatch(/^run_/);
    expect(started.err.join('\n')).toContain(`runs watch ${runId}`);
    // The same key and input: the same run, as JSON this time.
    const again = await cli('runs', 'start', wf, '--input', '{"n":21}', '--idempotency-key', key, '--json');
    expect(json<{ run_id: string; workflow_id: string }>(again.out)).toEqual([
      expect.objectContaining({ run_id: runId, workflow_id: wf }),
    ]);
    await waitForStatus(g.api, g.user, runId, isTerminal);

    const got = await cli('runs', 'get', runId, '--json');
    expect(got.code).toBe(0);
    expect(json<{ run_id: string; status: string; outputs: unknown }>(got.out)).toEqual([
      expect.objectContaining({ run_id: runId, status: 'completed', outputs: { double: 42 } }),
    ]);
    const text = await cli('runs', 'get', runId);
    expect(text.code).toBe(0);
    expect(text.out[0]).toMatch(new RegExp(`^${runId}  cli-start\\S*  completed$`));
    expect(text.out.join('\n')).toMatch(/^STEP\s+STATUS\s+ATTEMPTS\s+TOKENS\s+DURATION\s+ERROR$/m);
    expect(text.out.join('\n')).toMatch(/^double\s+completed\s+1\s/m);
    expect(text.out.join('\n')).toContain('double: 42');

    // Input from a file, followed to its end.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-cli-'));
    const file = path.join(dir, 'input.json');
    fs.writeFileSync(file, '{"n": 5}');
    const watched = await cli('runs', 'start', wf, '--input-file', file, '--watch');
    fs.rmSync(dir, { recursive: true, force: true });
    expect(watched.code).toBe(0);
    expect(watched.out.at(-1)).toMatch(/completed/);

    // The API's refusals, as messages a person can act on.
    const bad = await cli('runs', 'start', wf, '--input', '{"n":"x"}');
    expect(bad.code).not.toBe(0);
    expect(bad.err.join('\n')).toContain('HTTP 400');
    const notJson = await cli('runs', 'start', wf, '--input', '{n:1}');
    expect(notJson.code).not.toBe(0);
    expect(notJson.err.join('\n')).toContain('--input: not JSON');
    const unknown = await cli('runs', 'start', 'wf_doesnotexist1234');
    expect(unknown.code).not.toBe(0);
    expect(unknown.err.join('\n')).toContain('HTTP 404');
  }, 90_000);

  it('runs cancel: a run waiting for approval ends cancelled', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('cli-cancel'),
      steps: [{ id: 'gate', template_id: g.tpl.approval._id, config: { message: 'Wait here' } }],
    });
    const runId = (await cli('runs', 'start', wf)).out[0]!;
    await waitForStatus(g.api, g.user, runId, (s) => s.status === 'waiting');
    const cancelled = await cli('runs', 'cancel', runId);
    expect(cancelled.code).toBe(0);
    expect(cancelled.out).toEqual([`cancel requested ${runId}`]);
    expect((await waitForStatus(g.api, g.user, runId, isTerminal)).status).toBe('cancelled');
    const unknown = await cli('runs', 'cancel', 'run_doesnotexist123');
    expect(unknown.code).not.toBe(0);
    expect(unknown.err.join('\n')).toContain('HTTP 404');
  }, 60_000);

  it('workflows list and agents list: every item, past the largest page, as a table or JSON', async () => {
    const names = [uniqueId('cli-list-a'), uniqueId('cli-list-b')];
    const ids: string[] = [];
    for (const name of names) {
      ids.push(
        await createWorkflow(g.api, g.user, {
          name,
          steps: [{ id: 'one', template_id: g.tpl.transform._id, config: { expression: '1' } }],
        }),
      );
    }
    const workflows = await cli('workflows', 'list', '--json');
    expect(workflows.code).toBe(0);
    const listed = json<{ id: string; name: string }>(workflows.out);
    for (const id of ids) expect(listed.map((w) => w.id)).toContain(id);
    const table = await cli('workflows', 'list');
    expect(table.out[0]).toMatch(/^ID\s+NAME\s+STEPS\s+UPDATED$/);
    expect(table.out.find((l) => l.startsWith(ids[0]!))).toMatch(new RegExp(`^${ids[0]}\\s+${names[0]}\\s+1\\s+20`));

    // More templates than one page holds: the list follows the Link header's cursor.
    const tag = uniqueId('bulk');
    for (let i = 0; i < 201; i++) {
      await insertTemplate(g.api.database.db, g.user.id, {
        step_type: 'action',
        action_type: 'transform',
        name: `${tag}-${String(i).padStart(3, '0')}`,
        tags: [tag],
      });
    }
    const tagged = await cli('agents', 'list', '--tag', tag, '--json');
    expect(tagged.code).toBe(0);
    const names201 = json<{ name: string }>(tagged.out).map((t) => t.name);
    expect(names201).toHaveLength(201);
    expect(new Set(names201).size).toBe(201);
    const limited = await cli('agents', 'list', '--tag', tag, '--limit', '3');
    expect(limited.out).toHaveLength(4); // the header and three rows
    expect(limited.err.join('\n')).toContain('--limit');

    // docs/api.md's template example, applied with the CLI as it says, is then listed.
    const applied = await cli(
      'agents',
      'apply',
      '-f',
      path.join(__dirname, '../../docs/examples/page-summarizer.yaml'),
    );
    expect(applied.code).toBe(0);
    const web = json<{ name: string; system: boolean; default_tools: string[] }>(
      (await cli('agents', 'list', '--tag', 'web', '--json')).out,
    );
    expect(web).toContainEqual(
      expect.objectContaining({ name: 'Page summarizer', system: false, default_tools: ['http_fetch'] }),
    );

    const agents = await cli('agents', 'list', '--step-type', 'action');
    expect(agents.code).toBe(0);
    expect(agents.out[0]).toMatch(/^ID\s+NAME\s+TYPE\s+MODEL\s+OWNER$/);
    expect(agents.out.find((l) => l.startsWith(g.tpl.delay._id))).toMatch(/\s+action:delay\s+-\s+you$/);
    expect(agents.out.some((l) => /\s+system$/.test(l))).toBe(true);
    const badType = await cli('agents', 'list', '--step-type', 'robot');
    expect(badType.code).not.toBe(0);
  }, 90_000);
});
