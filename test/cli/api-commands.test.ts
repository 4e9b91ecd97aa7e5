/* eslint-disable no-control-regex -- these tests read the ANSI escape codes of the live view */
/**
 * The user commands (`runs …`, `approvals …`) driven through runCli, the entrypoint's body, against a local server
 * that answers as the API contract documents (spec "Run search", "Event stream", "Approvals inbox", "Rerun"). The
 * end-to-end test against the real API lives with the endpoints.
 */
import type { ServerResponse } from 'node:http';
import { loadConfig } from '../../config';
import { runCli } from '../../cli/run';
import {
  sendData,
  sendError,
  sseFrame,
  startFakeApi,
  startSse,
  type FakeApi,
  type FakeHandler,
  type FakeRequest,
} from '../helpers/fake-api';
import { runTs } from '../helpers/run-node';
import { RUN_ID, runEvents, statusBody } from './run-fixture';

const KEY = 'sw_test_key_for_the_fake_api';

interface Captured {
  code: number;
  out: string[];
  err: string[];
  /** Raw terminal writes (ANSI frames) when run as if in a terminal. */
  screen: string;
}

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function cli(args: string[], opts: { env?: Record<string, string>; tty?: boolean } = {}): Promise<Captured> {
  const config = loadConfig({ STEPWISE_URL: api!.url, STEPWISE_API_KEY: KEY, ...opts.env });
  const result: Captured = { code: -1, out: [], err: [], screen: '' };
  result.code = await runCli(args, config, {
    out: (l) => result.out.push(l),
    err: (l) => result.err.push(l),
    terminal: opts.tty ? { write: (t) => (result.screen += t), columns: 120, rows: 30 } : undefined,
  });
  return result;
}

const searchItem = (n: number) => ({
  run_id: `run_search000000${n}`,
  workflow_id: 'wf_fixture00000001',
  workflow_name: 'Daily digest',
  status: n % 2 ? 'failed' : 'timed_out',
  error: null,
  created_at: `2026-01-0${n}T00:00:00.000Z`,
  started_at: `2026-01-0${n}T00:00:01.000Z`,
  completed_at: `2026-01-0${n}T00:01:06.000Z`,
  usage: { llm_calls: 1, input_tokens: 1000 * n, output_tokens: n },
  duration_ms: 65_000,
});

/** The event stream of the fixture run; the first connection drops after `dropAfter` events, when given. */
function eventStream(list: { seq: number; type: string }[], dropAfter?: number): FakeHandler {
  return (req, res: ServerResponse, n) => {
    startSse(res);
    const after = Number(req.headers['last-event-id'] ?? 0);
    const rest = list.filter((e) => e.seq > after);
    if (n === 0 && dropAfter !== undefined) {
      res.write(rest.slice(0, dropAfter).map(sseFrame).join('') + ': ping\n\n');
      setTimeout(() => res.destroy(), 20);
      return;
    }
    res.end(rest.map(sseFrame).join(''));
  };
}

const EVENTS_PATH = `/api/v1/workflows/runs/${RUN_ID}/events`;
const STATUS_PATH = `/api/v1/workflows/runs/${RUN_ID}/status`;

describe('runs list', () => {
  it('sends every filter as the contract names it, with the key, and prints a table', async () => {
    api = await startFakeApi({ 'GET /api/v1/runs': (req, res) => sendData(res, 200, [searchItem(1), searchItem(2)]) });
    const res = await cli([
      'runs',
      'list',
      '--status',
      'failed,timed_out',
      '--workflow',
      'wf_fixture00000001',
      '--since',
      '2026-01-01',
      '--until',
      '2026-01-31T12:00:00+01:00',
      '--search',
      'digest',
      '--limit',
      '10',
    ]);
    expect(res).toMatchObject({ code: 0, err: [] });
    const [req] = api.requests as [FakeRequest];
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(Object.fromEntries(req.query)).toEqual({
      status: 'failed,timed_out',
      workflow_id: 'wf_fixture00000001',
      created_after: '2026-01-01T00:00:00.000Z',
      created_before: '2026-01-31T11:00:00.000Z',
      q: 'digest',
      limit: '10',
    });
    expect(res.out[0]).toMatch(/^RUN\s+WORKFLOW\s+STATUS\s+CREATED\s+DURATION\s+TOKENS$/);
    expect(res.out.slice(1).map((l) => l.split(/\s{2,}/))).toEqual([
      ['run_search0000001', 'Daily digest', 'failed', '2026-01-01T00:00:00.000Z', '1m05s', '1001'],
      ['run_search0000002', 'Daily digest', 'timed_out', '2026-01-02T00:00:00.000Z', '1m05s', '2002'],
    ]);
  });

  it('follows the Link cursor across pages up to --limit, and prints JSON lines with --json', async () => {
    api = await startFakeApi({
      'GET /api/v1/runs': (req, res, n) => {
        // The Link names another host (PUBLIC_URL): the CLI keeps its own base URL and takes only the cursor.
        if (n === 0)
          return sendData(res, 200, [searchItem(1), searchItem(2)], {
            Link: '<https://stepwise.example/api/v1/runs?limit=2&cursor=page2>; rel="next"',
          });
        sendData(res, 200, [searchItem(3), searchItem(4)], {
          Link: '<https://stepwise.example/api/v1/runs?cursor=page3>; rel="next"',
        });
      },
    });
    const res = await cli(['runs', 'list', '--limit', '3', '--json']);
    expect(res.code).toBe(0);
    expect(res.out.map((l) => (JSON.parse(l) as { run_id: string }).run_id)).toEqual([
      'run_search0000001',
      'run_search0000002',
      'run_search0000003',
    ]);
    expect(api.requests.map((r) => Object.fromEntries(r.query))).toEqual([
      { limit: '3' },
      { limit: '1', cursor: 'page2' },
    ]);
  });

  it('refuses unknown statuses and bad dates before asking the API', async () => {
    api = await startFakeApi({});
    const status = await cli(['runs', 'list', '--status', 'failed,broken']);
    expect(status.code).toBe(1);
    expect(status.err.join('\n')).toContain('--status: broken is not one of queued, running, waiting');
    const since = await cli(['runs', 'list', '--since', 'yesterday-ish']);
    expect(since.code).toBe(1);
    expect(since.err.join('\n')).toContain('--since: "yesterday-ish" is not a date');
    expect(api.requests).toHaveLength(0);
  });
});

describe('errors a person can act on', () => {
  it('answers a usage error in a subcommand with exit code 1 and the reason, without ending the process', async () => {
    // Before, only the top level threw: `runs bogus` called process.exit, which would end this test process.
    api = await startFakeApi({});
    const config = loadConfig({ STEPWISE_URL: api.url, STEPWISE_API_KEY: KEY });
    for (const [args, reason] of [
      [['runs', 'bogus'], "unknown command 'bogus'"],
      [['runs', 'list', '--nope'], "unknown option '--nope'"],
      [['runs', 'get'], "missing required argument 'run-id'"],
    ] as const) {
      const err: string[] = [];
      const code = await runCli([...args], config, { out: () => undefined, err: (l) => err.push(l) });
      expect({ args, code }).toEqual({ args, code: 1 });
      expect(err.join('\n')).toContain(reason);
    }
    expect(api.requests).toHaveLength(0);
  });

  it('asks for a key when none is given, without calling the API', async () => {
    api = await startFakeApi({});
    const config = loadConfig({ STEPWISE_URL: api.url });
    const err: string[] = [];
    const code = await runCli(['approvals', 'list'], config, { out: () => undefined, err: (l) => err.push(l) });
    expect(code).toBe(1);
    expect(err.join('\n')).toContain('no API key: pass --api-key <key> or set STEPWISE_API_KEY');
    // Where a newcomer's key comes from: the dev stack's banner and its demo-key file.
    expect(err.join('\n')).toContain('`export` lines `npm run dev` prints');
    expect(err.join('\n')).toContain('export STEPWISE_API_KEY=$(cat .stepwise/demo-key)');
    expect(api.requests).toHaveLength(0);
  });

  it('explains a 401 and a 404 with the server message and code; the flags win over the environment', async () => {
    api = await startFakeApi({
      'GET /api/v1/approvals': (req, res) =>
        req.headers.authorization === 'Bearer sw_flag'
          ? sendError(res, 401, 'unauthorized', 'missing or invalid API key: send Authorization: Bearer <key>')
          : sendData(res, 200, []),
      'GET /api/v1/workflows/runs/run_unknown0000001/events': (req, res) =>
        sendError(res, 404, 'not_found', 'run run_unknown0000001 not found'),
    });
    const refused = await cli(['approvals', 'list', '--api-key', 'sw_flag']);
    expect(refused.code).toBe(1);
    expect(refused.err.join('\n')).toBe(
      `error: the API at ${api.url} refused the key (HTTP 401 unauthorized): missing or invalid API key: send ` +
        'Authorization: Bearer <key>. Check --api-key / STEPWISE_API_KEY, and --url / STEPWISE_URL if this is not ' +
        'the stack you meant (npm run dev prints the export lines for its URL and key); an administrator makes keys ' +
        'with: npm run cli -- keys create <user>',
    );
    const missing = await cli(['runs', 'watch', 'run_unknown0000001']);
    expect(missing.code).toBe(1);
    expect(missing.err.join('\n')).toContain(
      'run run_unknown0000001 not found (HTTP 404 not_found): the id is unknown or belongs to another user',
    );
  });

  it('names the URL when the API cannot be reached', async () => {
    api = await startFakeApi({});
    const url = api.url;
    await api.close();
    const res = await cli(['runs', 'list'], { env: { STEPWISE_URL: url } });
    expect(res.code).toBe(1);
    expect(res.err.join('\n')).toContain(`cannot reach the Stepwise API at ${url} (ECONNREFUSED)`);
  });
});

describe('runs watch', () => {
  it('prints one line per event when not a terminal, resumes a dropped stream once, and exits 0 on completion', async () => {
    api = await startFakeApi({ [`GET ${EVENTS_PATH}`]: eventStream(runEvents(), 5) });
    const res = await cli(['runs', 'watch', RUN_ID]);
    expect(res.code).toBe(0);
    expect(res.out).toHaveLength(11);
    expect(res.out[0]).toBe('2026-01-02T03:04:00.000Z fetch started');
    expect(res.out[4]).toBe('2026-01-02T03:04:05.000Z draft turn 1: tool http_fetch ok: 200 OK');
    expect(res.out[5]).toBe(
      '2026-01-02T03:04:06.000Z draft attempt 1 failed, retrying: llm_unavailable: model overloaded',
    );
    expect(res.out[10]).toBe('2026-01-02T03:04:15.000Z run completed');
    expect(res.err).toEqual([expect.stringMatching(/^connection lost \(.+\); resuming after event 5 in 0\.0 s$/)]);
    const calls = api.requestsTo('GET', EVENTS_PATH);
    expect(calls.map((r) => r.headers['last-event-id'])).toEqual([undefined, '5']);
    expect(calls[0]!.headers.accept).toBe('text/event-stream');
    // Not a terminal: no status read, the stream alone drives the output.
    expect(api.requestsTo('GET', STATUS_PATH)).toHaveLength(0);
  });

  it('prints the events as JSON lines with --json and exits 1 when the run failed', async () => {
    const list = runEvents('failed');
    api = await startFakeApi({ [`GET ${EVENTS_PATH}`]: eventStream(list) });
    const res = await cli(['runs', 'watch', RUN_ID, '--json']);
    expect(res.code).toBe(1);
    expect(res.out.map((l) => JSON.parse(l) as unknown)).toEqual(list);
  });

  it('in a terminal, starts from the status and redraws a table with a progress bar until the end', async () => {
    api = await startFakeApi({
      [`GET ${STATUS_PATH}`]: (req, res) => sendData(res, 200, statusBody()),
      [`GET ${EVENTS_PATH}`]: eventStream(runEvents('failed')),
    });
    const res = await cli(['runs', 'watch', RUN_ID], { tty: true });
    expect(res.code).toBe(1);
    expect(res.out).toEqual([]);
    expect(res.err).toEqual([`run ${RUN_ID} failed: bad key`]);
    const frames = res.screen.split('\x1b[J').map((f) => f.replace(/\x1b\[\d*[A-Za-z]/g, ''));
    expect(frames[0]).toContain('[░░░░░░░░░░░░░░░░░░░░░░░░] 0/3 steps');
    const last = frames.at(-2)!.split('\n');
    expect(last[0]).toBe(`${RUN_ID}  Daily digest  failed`);
    expect(last[1]).toContain('3/3 steps  ·  120 tokens');
    expect(last.slice(4, 7).map((l) => l.split(/\s{2,}/).slice(0, 3))).toEqual([
      ['fetch', 'completed', '1'],
      ['draft', 'failed', '2'],
      ['notify', 'skipped', 'an earlier step failed'],
    ]);
    // Every frame after the first moves up over the previous one (in place, not scrolling).
    expect(res.screen.match(/\x1b\[\d+F/g)?.length).toBe(res.screen.split('\x1b[J').length - 2);
  });
});

describe('runs rerun', () => {
  it('posts from_step and the Idempotency-Key, prints the new run id, and follows it with --watch', async () => {
    const rerunPath = '/api/v1/workflows/runs/run_failed00000001/rerun';
    api = await startFakeApi({
      [`POST ${rerunPath}`]: (req, res) =>
        sendData(res, 202, {
          run_id: RUN_ID,
          workflow_id: 'wf_fixture00000001',
          status: 'queued',
          status_url: `${api!.url}${STATUS_PATH}`,
          rerun_of: 'run_failed00000001',
        }),
      [`GET ${EVENTS_PATH}`]: eventStream(runEvents()),
    });
    const plain = await cli([
      'runs',
      'rerun',
      'run_failed00000001',
      '--from-step',
      'draft',
      '--idempotency-key',
      'k-1',
    ]);
    expect(plain.code).toBe(0);
    expect(plain.out).toEqual([RUN_ID]);
    expect(plain.err[0]).toBe(`Started ${RUN_ID}, a rerun of run_failed00000001 from step draft.`);
    const [post] = api.requestsTo('POST', rerunPath);
    expect(post!.body).toEqual({ from_step: 'draft' });
    expect(post!.headers['idempotency-key']).toBe('k-1');
    expect(post!.headers['content-type']).toBe('application/json');

    const watched = await cli(['runs', 'rerun', 'run_failed00000001', '--watch']);
    expect(watched.code).toBe(0);
    expect(api.requestsTo('POST', rerunPath)[1]!.body).toEqual({});
    expect(api.requestsTo('POST', rerunPath)[1]!.headers['idempotency-key']).toBeUndefined();
    expect(watched.out[0]).toBe(RUN_ID);
    expect(watched.out.at(-1)).toBe('2026-01-02T03:04:15.000Z run completed');
  });

  it('sends --model <step>=<model> as overrides of those agent steps, and refuses a malformed one', async () => {
    const rerunPath = '/api/v1/workflows/runs/run_failed00000001/rerun';
    api = await startFakeApi({
      [`POST ${rerunPath}`]: (req, res) =>
        sendData(res, 202, {
          run_id: RUN_ID,
          workflow_id: 'wf_fixture00000001',
          status: 'queued',
          status_url: `${api!.url}${STATUS_PATH}`,
          rerun_of: 'run_failed00000001',
          overrides: { draft: { model: 'compat:llama3.2' }, review: { model: 'openai:gpt-4o' } },
        }),
    });
    const res = await cli([
      'runs',
      'rerun',
      'run_failed00000001',
      '--model',
      'draft=compat:llama3.2',
      '--model',
      'review=openai:gpt-4o',
    ]);
    expect(res.code).toBe(0);
    expect(api.requestsTo('POST', rerunPath)[0]!.body).toEqual({
      overrides: { draft: { model: 'compat:llama3.2' }, review: { model: 'openai:gpt-4o' } },
    });
    expect(res.err[0]).toBe(
      `Started ${RUN_ID}, a rerun of run_failed00000001 with draft on compat:llama3.2, review on openai:gpt-4o.`,
    );

    const bad = await cli(['runs', 'rerun', 'run_failed00000001', '--model', 'compat:llama3.2']);
    expect(bad.code).toBe(1);
    expect(bad.err.join('\n')).toContain('--model: "compat:llama3.2" is not <step-id>=<provider:model>');
    expect(api.requestsTo('POST', rerunPath)).toHaveLength(1);
  });
});

describe('approvals', () => {
  const item = {
    run_id: RUN_ID,
    workflow_id: 'wf_fixture00000001',
    workflow_name: 'Daily digest',
    step_id: 'review[2]',
    message: 'Send the digest?',
    instructions: null,
    waiting_since: '2026-01-02T03:04:05.000Z',
    deadline: null,
  };

  it('lists the inbox as a table or JSON lines, and says so when it is empty', async () => {
    api = await startFakeApi({
      'GET /api/v1/approvals': (req, res, n) => sendData(res, 200, n < 2 ? [item] : []),
    });
    const table = await cli(['approvals', 'list']);
    expect(table.out[0]).toMatch(/^RUN\s+STEP\s+WORKFLOW\s+WAITING SINCE\s+DEADLINE\s+MESSAGE$/);
    expect(table.out[1]!.split(/\s{2,}/)).toEqual([
      RUN_ID,
      'review[2]',
      'Daily digest',
      '2026-01-02T03:04:05.000Z',
      '-',
      'Send the digest?',
    ]);
    const json = await cli(['approvals', 'list', '--json']);
    expect(json.out.map((l) => JSON.parse(l) as unknown)).toEqual([item]);
    const empty = await cli(['approvals', 'list']);
    expect(empty).toMatchObject({ code: 0, out: [], err: ['nothing is waiting for your decision'] });
  });

  it('approves and rejects through the approve endpoint, with the comment', async () => {
    const path = `/api/v1/workflows/runs/${RUN_ID}/approve`;
    api = await startFakeApi({
      [`POST ${path}`]: (req, res) => {
        const body = req.body as { step_id: string; approved: boolean };
        if (body.step_id === 'gone') return sendError(res, 409, 'conflict', 'step gone is not waiting');
        sendData(res, 200, { run_id: RUN_ID, step_id: body.step_id, approved: body.approved });
      },
    });
    const yes = await cli(['approvals', 'approve', RUN_ID, 'review[2]', '--comment', 'looks right']);
    expect(yes).toMatchObject({ code: 0, out: [`approved ${RUN_ID} review[2]`] });
    const no = await cli(['approvals', 'reject', RUN_ID, 'review#3']);
    expect(no).toMatchObject({ code: 0, out: [`rejected ${RUN_ID} review#3`] });
    expect(api.requestsTo('POST', path).map((r) => r.body)).toEqual([
      { step_id: 'review[2]', approved: true, comment: 'looks right' },
      { step_id: 'review#3', approved: false },
    ]);
    const late = await cli(['approvals', 'approve', RUN_ID, 'gone']);
    expect(late).toMatchObject({ code: 1, err: ['error: step gone is not waiting (HTTP 409 conflict)'] });
  });
});

describe('the entrypoint (a real child process, stdout a pipe)', () => {
  it('reads STEPWISE_URL / STEPWISE_API_KEY, prints plain lines and exits 1 for a failed run', async () => {
    api = await startFakeApi({ [`GET ${EVENTS_PATH}`]: eventStream(runEvents('failed')) });
    const res = await runTs('cli/index.ts', ['runs', 'watch', RUN_ID], {
      STEPWISE_URL: api.url,
      STEPWISE_API_KEY: KEY,
      LOG_LEVEL: 'silent',
    });
    expect(res.code).toBe(1);
    expect(res.stdout.trim().split('\n')).toHaveLength(10);
    expect(res.stdout).toContain('draft failed: llm_auth: bad key');
    expect(res.stdout).not.toContain('\x1b[');
    expect(res.stderr).toBe(`run ${RUN_ID} failed: bad key\n`);
    expect(api.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});
