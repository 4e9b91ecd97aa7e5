/**
 * Experiments in replay mode on the real stack (API, worker, Temporal, MongoDB, a scripted model server counting model
 * calls, an HTTP sink counting requests). A recorded run of `notify` (an HTTP request) → `draft` (an agent that
 * fetches a page with http_fetch) → `polish` (an agent) becomes a dataset item; then:
 * (a) replaying the unchanged workflow reproduces the recorded output with zero model calls and zero requests;
 * (b) a prompt change on `draft` runs exactly `draft` and `polish` again (model calls counted), `draft`'s recorded
 *     tool call is served from the record (the sink sees nothing), the compare endpoint shows the per-step
 *     difference, and in `error_on_miss` mode a call with other arguments fails the item;
 * (c) a changed side-effect step is a 400 at creation naming it;
 * (d) an item whose recorded run is gone is a 400 naming it; one that goes after creation fails only that item.
 */
import type { Response } from 'supertest';
import { runsCollection } from '../../db/runs';
import type { JsonObject } from '../../domain/json';
import { getTranscript } from '../helpers/agent-runs';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import type { RecordedRequest } from '../helpers/llm-server';
import { openApiChecker } from '../helpers/openapi';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

interface Experiment {
  id: string;
  status: string;
  mode: string;
  replay: { tool_calls: string } | null;
  spend: { tokens: number; model_calls: number };
}
interface ReplayDiff {
  source_run_id: string;
  steps: { step_id: string; how: string; changed: boolean | null; recorded?: unknown; output?: unknown }[];
}
interface Result {
  run_id: string;
  run_status: string;
  scores: { name: string; score: number; pass: boolean }[];
  usage: { llm_calls: number };
  error: string | null;
  replay: ReplayDiff | null;
}

const ENDED = ['completed', 'budget_exhausted', 'cancelled', 'failed'];

describe('experiments in replay mode', () => {
  let g: GraphStack;
  const oas = openApiChecker();
  let draftModel: { model: string; requests: RecordedRequest[] };
  let polishModel: { model: string; requests: RecordedRequest[] };
  let draftTpl: string;
  let polishTpl: string;
  const factsPath = `/facts-${uniqueId('')}`;
  const notifyPath = `/notify-${uniqueId('')}`;

  const text = (r: RecordedRequest) => JSON.stringify(r.body.messages);

  beforeAll(async () => {
    g = await startGraphStack();
    g.sink.route(factsPath, { status: 200, body: { fact: 'the sky is blue' } });
    g.sink.route(notifyPath, { status: 200, body: { ok: true } });
    // `draft`: asks for the facts page (v3 of the prompt asks with other arguments), then answers by its prompt.
    draftModel = g.llm.script(uniqueId('draft-'), (req) => {
      const version = /Draft (v\d)/.exec(text(req))?.[1] ?? 'v?';
      if (!text(req).includes('"tool"')) {
        const url = version === 'v3' ? `${g.sink.url(factsPath)}?again=1` : g.sink.url(factsPath);
        return { toolCalls: [{ name: 'http_fetch', args: { url } }] };
      }
      return { text: `draft-${version}` };
    });
    // `polish`: answers with the draft it was given.
    polishModel = g.llm.script(uniqueId('polish-'), (req) => ({
      text: `polished ${/draft-v\d/.exec(text(req))?.[0] ?? 'nothing'}`,
    }));
    const db = g.api.database.db;
    draftTpl = (
      await insertTemplate(db, g.user.id, {
        step_type: 'agent',
        name: uniqueId('drafter'),
        default_prompt: 'Draft v1.',
        default_tools: ['http_fetch'],
        model: `openai:${draftModel.model}`,
        egress: { http_hosts: [g.sink.host] },
      })
    )._id;
    polishTpl = (
      await insertTemplate(db, g.user.id, {
        step_type: 'agent',
        name: uniqueId('polisher'),
        default_prompt: 'Polish.',
        default_tools: [],
        model: `openai:${polishModel.model}`,
      })
    )._id;
  }, 60_000);
  afterAll(() => g?.stop());

  const call = async (method: 'get' | 'post', path: string, body?: object) => {
    const req = g.api.http[method](`/api/v1${path}`).set(g.user.auth);
    const res: Response = body === undefined ? await req : await req.send(body);
    oas.check(res);
    return res;
  };
  const data = <T>(res: Response, status = 200): T => {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
    return (res.body as { data: T }).data;
  };
  /** notify → draft → polish; `draft` may carry its own prompt, `notify` its own body. */
  const workflow = (opts: { prompt?: string; notifyBody?: JsonObject } = {}) =>
    createWorkflow(g.api, g.user, {
      name: uniqueId('replayed'),
      steps: [
        {
          id: 'notify',
          template_id: g.tpl.http_request._id,
          config: {
            url: g.sink.url(notifyPath),
            method: 'POST',
            body: opts.notifyBody ?? { topic: '{{input.topic}}' },
          },
        },
        {
          id: 'draft',
          template_id: draftTpl,
          input: 'Write about {{input.topic}}',
          ...(opts.prompt ? { prompt: opts.prompt } : {}),
        },
        { id: 'polish', template_id: polishTpl, input: '{{steps.draft.output}}' },
      ],
    });
  /** A dataset of the recorded runs (their inputs, outputs as expected, ids as source_run_id). */
  const datasetOf = async (runIds: string[]) => {
    const ds = data<{ id: string }>(await call('post', '/datasets', { name: uniqueId('recorded-') }), 201).id;
    data(await call('post', `/datasets/${ds}/items/from-runs`, { run_ids: runIds }), 201);
    return ds;
  };
  const record = async (workflowId: string, topic: string) => {
    const runId = await startRun(g.api, g.user, workflowId, { topic });
    const end = await waitForStatus(g.api, g.user, runId, isTerminal, 60_000);
    if (end.status !== 'completed') throw new Error(`run ${runId} ended ${JSON.stringify(end)}`);
    return runId;
  };
  const waitEnd = async (id: string): Promise<Experiment> => {
    for (let i = 0; i < 600; i++) {
      const exp = data<Experiment>(await call('get', `/experiments/${id}`));
      if (ENDED.includes(exp.status)) return exp;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`experiment ${id} did not end`);
  };
  const results = async (id: string) => data<Result[]>(await call('get', `/experiments/${id}/results`));
  const counts = () => ({
    draft: draftModel.requests.length,
    polish: polishModel.requests.length,
    facts: g.sink.requestsTo(factsPath).length,
    notify: g.sink.requestsTo(notifyPath).length,
  });

  let source: string;
  let dataset: string;
  let original: string;
  let baseline: string;

  it('(a) replays an unchanged workflow: the recorded output, zero model calls, zero requests', async () => {
    original = await workflow();
    source = await record(original, 'tides');
    expect(counts()).toMatchObject({ draft: 2, polish: 1, facts: 1, notify: 1 });
    dataset = await datasetOf([source]);
    const before = counts();
    const exp = data<Experiment>(
      await call('post', '/experiments', {
        dataset_id: dataset,
        workflow_id: original,
        mode: 'replay',
        scorers: [{ kind: 'exact' }],
      }),
      201,
    );
    expect(exp).toMatchObject({ mode: 'replay', replay: { tool_calls: 'recorded' } });
    const ended = await waitEnd(exp.id);
    expect(ended).toMatchObject({ status: 'completed', spend: { tokens: 0, model_calls: 0 } });
    expect(counts()).toEqual(before);
    const [row] = await results(exp.id);
    expect(row).toMatchObject({ run_status: 'completed', error: null, usage: { llm_calls: 0 } });
    expect(row!.scores).toEqual([expect.objectContaining({ name: 'exact', score: 1, pass: true })]);
    expect(row!.replay).toEqual({
      source_run_id: source,
      steps: ['notify', 'draft', 'polish'].map((step_id) => ({ step_id, how: 'replayed', changed: null })),
    });
    // The item's run is an ordinary run whose steps say where their outputs came from.
    const run = await runsCollection(g.api.database.db).findOne({ _id: row!.run_id });
    expect(run?.steps.map((s) => s.reused_from_run_id)).toEqual([source, source, source]);
    baseline = exp.id;
  }, 120_000);

  it('(b) a prompt change runs that step and its downstream, serving its recorded tool call', async () => {
    const changed = await workflow({ prompt: 'Draft v2.' });
    const before = counts();
    const exp = data<Experiment>(
      await call('post', '/experiments', {
        dataset_id: dataset,
        workflow_id: changed,
        mode: 'replay',
        scorers: [{ kind: 'exact', path: 'polish' }],
      }),
      201,
    );
    const ended = await waitEnd(exp.id);
    // Two calls of `draft` (the tool call, the answer) and one of `polish`; the facts page is not fetched again.
    expect(counts()).toEqual({ ...before, draft: before.draft + 2, polish: before.polish + 1 });
    expect(ended).toMatchObject({ status: 'completed', spend: { model_calls: 3 } });
    const [row] = await results(exp.id);
    expect(row!.scores[0]).toMatchObject({ score: 0, pass: false });
    expect(row!.replay?.steps).toEqual([
      { step_id: 'notify', how: 'replayed', changed: null },
      { step_id: 'draft', how: 'executed', changed: true, recorded: 'draft-v1', output: 'draft-v2' },
      {
        step_id: 'polish',
        how: 'executed',
        changed: true,
        recorded: 'polished draft-v1',
        output: 'polished draft-v2',
      },
    ]);
    const transcript = await getTranscript(g.api, g.user, row!.run_id, 'draft');
    const tools = transcript.entries.filter((e) => e.role === 'tool');
    expect(tools).toEqual([
      expect.objectContaining({ name: 'http_fetch', is_error: false, replayed_from_run_id: source }),
    ]);
    expect(JSON.stringify(tools[0]!.result)).toContain('the sky is blue');

    // The comparison with the unchanged replay shows, per step, what was replayed and what changed.
    const cmp = data<{
      items: { change: string; steps?: { changed: string[]; unchanged: string[] }; replay?: ReplayDiff }[];
    }>(await call('get', `/experiments/${exp.id}/compare?baseline=${baseline}`));
    expect(cmp.items[0]!.steps).toMatchObject({ changed: ['draft', 'polish'], unchanged: ['notify'] });
    expect(cmp.items[0]!.replay?.steps.map((s) => [s.step_id, s.how])).toEqual([
      ['notify', 'replayed'],
      ['draft', 'executed'],
      ['polish', 'executed'],
    ]);
  }, 120_000);

  it('(b) error_on_miss fails the item when the tool call’s arguments differ from the record', async () => {
    const changed = await workflow({ prompt: 'Draft v3.' });
    const before = counts();
    const exp = data<Experiment>(
      await call('post', '/experiments', {
        dataset_id: dataset,
        workflow_id: changed,
        mode: 'replay',
        replay: { tool_calls: 'error_on_miss' },
        scorers: [{ kind: 'exact', path: 'polish' }],
      }),
      201,
    );
    await waitEnd(exp.id);
    const [row] = await results(exp.id);
    expect(row!.run_status).toBe('failed');
    expect(row!.error).toContain('error_on_miss');
    expect(row!.error).toContain('http_fetch');
    // The model was asked once; no request left for the sink, and `polish` never ran.
    expect(counts()).toEqual({ ...before, draft: before.draft + 1 });
  }, 120_000);

  it('(c) refuses at creation a side-effect step that would be sent again, naming it', async () => {
    const changed = await workflow({ notifyBody: { topic: '{{input.topic}}', urgent: true } });
    const res = await call('post', '/experiments', {
      dataset_id: dataset,
      workflow_id: changed,
      mode: 'replay',
      scorers: [{ kind: 'exact' }],
    });
    expect(res.status).toBe(400);
    const error = (res.body as { error: string }).error;
    expect(error).toContain('step "notify" has a side effect');
    expect(error).toContain('its definition changed');
    expect(res.headers['x-error-code']).toBe('replay_refused');
  }, 60_000);

  it('(d) refuses an item whose recorded run is gone, and an item not recorded from a run', async () => {
    const gone = await record(original, 'comets');
    const ds = await datasetOf([gone]);
    await runsCollection(g.api.database.db).deleteOne({ _id: gone });
    const body = { dataset_id: ds, workflow_id: original, mode: 'replay', scorers: [{ kind: 'exact' }] };
    const res = await call('post', '/experiments', body);
    expect(res.status).toBe(400);
    expect((res.body as { error: string }).error).toMatch(
      new RegExp(`item itm_\\S+: its recorded run ${gone} no longer exists`),
    );
    const handMade = data<{ id: string }>(await call('post', '/datasets', { name: uniqueId('hand-') }), 201).id;
    data(await call('post', `/datasets/${handMade}/items`, { items: [{ input: { topic: 'x' } }] }), 201);
    const bare = await call('post', '/experiments', { ...body, dataset_id: handMade });
    expect(bare.status).toBe(400);
    expect((bare.body as { error: string }).error).toContain('was not recorded from a run');
  }, 120_000);

  it('(d) fails only the item whose recorded run disappears after creation, saying so', async () => {
    const first = await record(original, 'reefs');
    const second = await record(original, 'dunes');
    const ds = await datasetOf([first, second]);
    // The recorded steps and a new approval at the end: each item's run waits there, one at a time.
    const gated = await createWorkflow(g.api, g.user, {
      name: uniqueId('gated-replay'),
      steps: [
        {
          id: 'notify',
          template_id: g.tpl.http_request._id,
          config: { url: g.sink.url(notifyPath), method: 'POST', body: { topic: '{{input.topic}}' } },
        },
        { id: 'draft', template_id: draftTpl, input: 'Write about {{input.topic}}' },
        { id: 'polish', template_id: polishTpl, input: '{{steps.draft.output}}' },
        { id: 'gate', template_id: g.tpl.approval._id, config: { message: 'Go?' } },
      ],
    });
    const exp = data<Experiment>(
      await call('post', '/experiments', {
        dataset_id: ds,
        workflow_id: gated,
        mode: 'replay',
        concurrency: 1,
        scorers: [{ kind: 'exact', path: 'polish' }],
      }),
      201,
    );
    const db = g.api.database.db;
    let waiting: string | undefined;
    for (let i = 0; i < 300 && !waiting; i++) {
      waiting = (await runsCollection(db).findOne({ experiment_id: exp.id, 'steps.status': 'waiting' }))?._id;
      if (!waiting) await new Promise((r) => setTimeout(r, 100));
    }
    await runsCollection(db).deleteOne({ _id: second });
    await g.api.http
      .post(`/api/v1/workflows/runs/${waiting}/approve`)
      .set(g.user.auth)
      .send({ step_id: 'gate', approved: true })
      .expect(200);
    expect((await waitEnd(exp.id)).status).toBe('completed');
    const rows = await results(exp.id);
    expect(rows.map((r) => [r.run_status, r.scores[0]?.pass])).toEqual([
      ['completed', true],
      ['not_started', false],
    ]);
    expect(rows[1]!.error).toContain(`its recorded run ${second} no longer exists`);
  }, 120_000);
});
