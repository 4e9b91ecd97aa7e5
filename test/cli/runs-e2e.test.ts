/**
 * The user commands end to end: the CLI (in-process, as the entrypoint runs it) against the real API on a socket,
 * with a real worker and Temporal. A run waits for approval; the CLI finds it in the inbox, approves it, watches the
 * run to its end, lists it, and reruns it.
 */
import { loadConfig } from '../../config';
import { runCli } from '../../cli/run';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('CLI runs and approvals against the real API', () => {
  let g: GraphStack;
  let url: string;

  beforeAll(async () => {
    g = await startGraphStack({ EVENTS_POLL_MS: '50' });
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

  it('inbox → approve → watch to the end → list → rerun', async () => {
    const name = uniqueId('cli-flow');
    const wf = await createWorkflow(g.api, g.user, {
      name,
      steps: [
        { id: 'prepare', template_id: g.tpl.transform._id, config: { expression: '21 * 2' } },
        { id: 'gate', template_id: g.tpl.approval._id, config: { message: 'Publish the answer?' } },
        { id: 'finish', template_id: g.tpl.transform._id, config: { expression: '"done"' } },
      ],
    });
    const runId = await startRun(g.api, g.user, wf);
    await waitForStatus(g.api, g.user, runId, (s) => s.status === 'waiting');

    const inbox = await cli('approvals', 'list', '--json');
    expect(inbox.code).toBe(0);
    expect(inbox.out.map((l) => JSON.parse(l) as { run_id: string; step_id: string; message: string })).toEqual([
      expect.objectContaining({ run_id: runId, step_id: 'gate', message: 'Publish the answer?' }),
    ]);

    // Watch from the start in the background while the CLI approves.
    const watching = cli('runs', 'watch', runId);
    const approved = await cli('approvals', 'approve', runId, 'gate', '--comment', 'ship it');
    expect(approved.code).toBe(0);
    const watched = await watching;
    expect(watched.code).toBe(0);
    const text = watched.out.join('\n');
    for (const step of ['prepare', 'gate', 'finish']) expect(text).toContain(step);
    expect(watched.out.at(-1)).toMatch(/completed/);
    expect((await cli('approvals', 'list', '--json')).out).toEqual([]);

    const listed = await cli('runs', 'list', '--status', 'completed', '--workflow', wf, '--json');
    expect(listed.code).toBe(0);
    expect(listed.out.map((l) => (JSON.parse(l) as { run_id: string }).run_id)).toEqual([runId]);

    const rerun = await cli('runs', 'rerun', runId, '--from-step', 'finish');
    expect(rerun.code).toBe(0);
    const newRunId = rerun.out.join(' ').match(/run_[A-Za-z0-9_-]+/)?.[0];
    expect(newRunId).toBeDefined();
    expect(newRunId).not.toBe(runId);
    const done = await waitForStatus(g.api, g.user, newRunId!, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.steps.map((s) => s.reused_from_run_id ?? null)).toEqual([runId, runId, null]);
  }, 90_000);

  it('hooks: create, list, deliver, rotate, disable, delete', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('cli-hook'),
      steps: [{ id: 'echo', template_id: g.tpl.transform._id, config: { expression: 'n', data: '{{input}}' } }],
    });
    const created = await cli('hooks', 'create', wf, '--name', 'ci', '--unsigned');
    expect(created.code).toBe(0);
    const [hookId, url] = created.out[0]!.split('\t');
    expect(url).toBe(`${url!.split('/api/')[0]}/api/v1/hooks/${hookId}`);
    const delivered = await fetch(url!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ n: 7 }),
    });
    expect(delivered.status).toBe(202);
    const runId = ((await delivered.json()) as { data: { run_id: string } }).data.run_id;
    expect(await waitForStatus(g.api, g.user, runId, isTerminal)).toMatchObject({ outputs: { echo: 7 } });

    const listed = await cli('hooks', 'list', wf, '--json');
    expect(listed.out.map((l) => (JSON.parse(l) as { id: string; signed: boolean }).signed)).toEqual([false]);
    const rotated = await cli('hooks', 'rotate', wf, hookId!);
    expect(rotated.out[1]).toMatch(/^whsec_/);
    expect((await cli('hooks', 'disable', wf, hookId!)).out).toEqual([`${hookId}\tdisabled`]);
    expect(
      (await fetch(url!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).status,
    ).toBe(404);
    expect((await cli('hooks', 'delete', wf, hookId!)).out).toEqual([`deleted ${hookId}`]);
    const gone = await cli('hooks', 'delete', wf, hookId!);
    expect(gone.code).not.toBe(0);
  }, 60_000);

  it('exits 1 when the watched run fails, and explains an unknown run', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('cli-fail'),
      steps: [{ id: 'boom', template_id: g.tpl.transform._id, config: { expression: '$error("no")' } }],
    });
    const runId = await startRun(g.api, g.user, wf);
    const watched = await cli('runs', 'watch', runId);
    expect(watched.code).toBe(1);
    expect(watched.out.join('\n')).toMatch(/failed/);
    const unknown = await cli('runs', 'watch', 'run_doesnotexist123');
    expect(unknown.code).not.toBe(0);
    expect(unknown.err.join('\n')).toMatch(/not found/);
  }, 60_000);
});
