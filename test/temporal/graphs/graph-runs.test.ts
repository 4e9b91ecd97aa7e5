/**
 * Workflow graphs end to end on the real stack (Temporal, the database, SMTP, an HTTP sink, the scripted LLM
 * server): routing on an agent's answer, parallel branches that overlap, maps with per-item side-effect keys and
 * both failure modes, loops that stop on their condition or their bound, error branches, sub-workflows, two
 * approvals waiting at once, and cancellation in the middle of a map.
 */
import { startGraphStack, type GraphStack } from '../../helpers/graph-stack';
import { historyText } from '../../helpers/history-text';
import { testCodec, uniqueId } from '../../helpers/stack';
import {
  createWorkflow,
  insertTemplate,
  isTerminal,
  startRun,
  temporalFinalStatus,
  waitForStatus,
  type StatusBody,
} from '../../helpers/workflows';
import { runsCollection } from '../../../db/runs';
import { messageIdFor } from '../../../temporal/mail/message';

interface GraphStep {
  id: string;
  status: string;
  skip_reason: string | null;
  child_run_id: string | null;
  output: unknown;
  error: { reason: string; message: string; code?: string } | null;
  executions: {
    counts: Record<string, number>;
    shown: {
      exec_id: string;
      status: string;
      output: unknown;
      error: { reason: string; code?: string } | null;
      attempts: number;
    }[];
    more_url: string | null;
  } | null;
}

const stepOf = (s: StatusBody, id: string) => s.steps.find((x) => x.id === id) as unknown as GraphStep;

describe('workflow graphs on the real stack', () => {
  let g: GraphStack;

  beforeAll(async () => {
    g = await startGraphStack();
  });
  afterAll(async () => {
    await g?.stop();
  });

  const run = async (steps: unknown[], input?: Record<string, unknown>, timeoutMs = 60_000) => {
    const wf = await createWorkflow(g.api, g.user, { name: uniqueId('graph'), steps } as never);
    const runId = await startRun(g.api, g.user, wf, input as never);
    return { runId, status: await waitForStatus(g.api, g.user, runId, isTerminal, timeoutMs) };
  };

  it('routes on an agent answer: one of three branches runs, the others are skipped, the join runs', async () => {
    const script = g.llm.script(uniqueId('router-'), [{ text: '{"category": "billing"}' }]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: 'classifier',
      default_prompt: 'Classify the ticket.',
      default_tools: [],
      model: `openai:${script.model}`,
      output_schema: { type: 'object', properties: { category: { type: 'string' } }, required: ['category'] },
    });
    const branch = (id: string, category: string) => ({
      id,
      template_id: g.tpl.transform._id,
      depends_on: ['classify'],
      when: `steps.classify.output.category == "${category}"`,
      config: { expression: `"handled by ${id}"` },
    });
    const { status } = await run(
      [
        { id: 'classify', template_id: agent._id, input: '{{input.ticket}}' },
        branch('billing', 'billing'),
        branch('tech', 'tech'),
        branch('sales', 'sales'),
        {
          id: 'reply',
          template_id: g.tpl.transform._id,
          depends_on: ['billing', 'tech', 'sales'],
          config: { expression: '$', data: { b: '{{steps.billing.output}}', t: '{{steps.tech.output}}' } },
        },
      ],
      { ticket: 'I was charged twice' },
    );
    expect(status.status).toBe('completed');
    expect(stepOf(status, 'billing').status).toBe('completed');
    for (const id of ['tech', 'sales']) {
      expect(stepOf(status, id).status).toBe('skipped');
      expect(stepOf(status, id).skip_reason).toContain('condition false');
    }
    expect(status.outputs.reply).toEqual({ b: 'handled by billing', t: null });
  });

  it('the status of a graph run that lost its last writes keeps the branch not taken skipped', async () => {
    const { runId, status } = await run([
      { id: 'pick', template_id: g.tpl.transform._id, config: { expression: '"a"' } },
      {
        id: 'a',
        template_id: g.tpl.transform._id,
        depends_on: ['pick'],
        when: 'steps.pick.output == "a"',
        config: { expression: '1' },
      },
      {
        id: 'b',
        template_id: g.tpl.transform._id,
        depends_on: ['pick'],
        when: 'steps.pick.output == "b"',
        config: { expression: '2' },
      },
    ]);
    expect(status.status).toBe('completed');
    await temporalFinalStatus(g.api, runId);
    // As if the database had been down for the end of the run: the projection still shows it running.
    const quiet = new Date(Date.now() - 3_600_000);
    await runsCollection(g.api.database.db).updateOne(
      { _id: runId },
      {
        $set: {
          status: 'running',
          completed_at: null,
          updated_at: quiet,
          'steps.1.status': 'running',
          'steps.2.status': 'pending',
          'steps.2.skip_reason': null,
        },
      },
    );
    const res = await g.api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(g.user.auth);
    const repaired = res.body.data as StatusBody;
    expect(repaired.status).toBe('completed');
    expect(repaired.steps.map((s) => [s.id, s.status])).toEqual([
      ['pick', 'completed'],
      ['a', 'completed'],
      ['b', 'skipped'],
    ]);
  });

  it('runs three HTTP steps in parallel (they overlap in time) and joins them', async () => {
    // Each request is held until all three have arrived: run one after another, the first would never be answered.
    let release!: () => void;
    const allThere = new Promise<void>((r) => (release = r));
    for (const p of ['a', 'b', 'c']) g.sink.route(`/par/${p}`, { status: 200, body: { from: p }, until: allThere });
    const started = (async () => {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && ['a', 'b', 'c'].some((p) => g.sink.requestsTo(`/par/${p}`).length === 0)) {
        await new Promise((r) => setTimeout(r, 20));
      }
      release();
    })();
    const { status } = await run([
      ...['a', 'b', 'c'].map((p) => ({
        id: `fetch_${p}`,
        template_id: g.tpl.http_request._id,
        depends_on: [],
        config: { url: g.sink.url(`/par/${p}`) },
      })),
      {
        id: 'summary',
        template_id: g.tpl.transform._id,
        depends_on: ['fetch_a', 'fetch_b', 'fetch_c'],
        config: {
          expression: '[a, b, c]',
          data: {
            a: '{{steps.fetch_a.output.body.from}}',
            b: '{{steps.fetch_b.output.body.from}}',
            c: '{{steps.fetch_c.output.body.from}}',
          },
        },
      },
    ]);
    await started;
    expect(status.status).toBe('completed');
    expect(status.outputs.summary).toEqual(['a', 'b', 'c']);
    // Overlap: every fetch started before any of them completed.
    const fetches = ['fetch_a', 'fetch_b', 'fetch_c'].map((id) => status.steps.find((s) => s.id === id)!);
    const lastStart = Math.max(...fetches.map((s) => Date.parse(s.started_at!)));
    const firstEnd = Math.min(...fetches.map((s) => Date.parse(s.completed_at!)));
    expect(lastStart).toBeLessThanOrEqual(firstEnd);
  });

  it('maps 20 e-mails with concurrency 5: 20 deliveries, 20 distinct Message-IDs, results in item order', async () => {
    // Each workflow task's items are taken straight back by the worker (eager dispatch, more than the SDK's 3).
    expect(g.worker.worker.options.maxEagerActivityReservationsPerWorkflowTask).toBe(
      g.api.config.WORKER_EAGER_ACTIVITIES,
    );
    expect(g.api.config.WORKER_EAGER_ACTIVITIES).toBeGreaterThanOrEqual(5);
    const before = g.smtp.messages.length;
    const customers = Array.from({ length: 20 }, (_, i) => ({ email: `c${i}@example.test`, name: `C${i}` }));
    const { runId, status } = await run(
      [
        {
          id: 'mail',
          template_id: g.tpl.send_email._id,
          map: { over: '{{input.customers}}', concurrency: 5 },
          config: { to: '{{map.item.email}}', subject: 'Hi {{map.item.name}}', text: 'Item {{map.index}}' },
        },
      ],
      { customers },
    );
    expect(status.status).toBe('completed');
    const mails = await g.smtp.waitForMessages(before + 20);
    const mine = mails.slice(before);
    const ids = new Set(mine.map((m) => m.messageId));
    expect(ids.size).toBe(20);
    for (let i = 0; i < 20; i++) {
      expect(ids.has(messageIdFor(`${runId}:mail[${i}]`, g.api.config.SMTP_FROM))).toBe(true);
    }
    const out = status.outputs.mail as { message_id: string }[];
    expect(out).toHaveLength(20);
    expect(out[3]!.message_id).toBe(messageIdFor(`${runId}:mail[3]`, g.api.config.SMTP_FROM));
    const step = stepOf(status, 'mail');
    expect(step.executions?.counts).toMatchObject({ total: 20, completed: 20, failed: 0 });
    expect(step.executions?.shown.map((e) => e.exec_id)).toEqual(customers.map((_, i) => `mail[${i}]`));
    // In the Temporal Web UI each activity is labelled with its action and execution (decoded as the UI does).
    const history = await g.api.temporal.workflow.getHandle(runId).fetchHistory();
    const text = await historyText(history, testCodec());
    for (let i = 0; i < 20; i++) expect(text).toContain(`send_email mail[${i}]`);
  });

  it('a map item that fails: `continue` records it and goes on; `fail` fails the step and the run', async () => {
    g.sink.route('/items/bad', { status: 404 });
    const steps = (mode: string) => [
      {
        id: 'calls',
        template_id: g.tpl.http_request._id,
        map: { over: '{{input.paths}}', concurrency: 2, on_item_error: mode },
        config: { url: `${g.sink.url('/items/')}{{map.item}}` },
      },
    ];
    const input = { paths: ['ok1', 'bad', 'ok2', 'ok3'] };
    const goOn = await run(steps('continue'), input);
    expect(goOn.status.status).toBe('completed');
    const out = goOn.status.outputs.calls as Record<string, unknown>[];
    expect(out).toHaveLength(4);
    expect(out[1]).toMatchObject({ error: { reason: expect.any(String) } });
    expect(out[0]).toMatchObject({ status: 200 });
    const counts = stepOf(goOn.status, 'calls').executions!.counts;
    expect(counts).toMatchObject({ total: 4, completed: 3, failed: 1 });
    // The failed item shows the error the map's list holds, code included.
    expect(out[1]).toEqual({ error: { reason: 'non_retryable', message: expect.any(String), code: 'http_4xx' } });
    expect(stepOf(goOn.status, 'calls').executions!.shown[1]).toEqual(
      expect.objectContaining({ exec_id: 'calls[1]', status: 'failed', output: out[1], error: out[1]!.error }),
    );

    const stop = await run(steps('fail'), input);
    expect(stop.status.status).toBe('failed');
    expect(stop.status.error).toMatchObject({ step_id: 'calls' });
    expect(stop.status.error!.message).toContain('item 1');
    expect(stepOf(stop.status, 'calls').status).toBe('failed');
    expect(stepOf(stop.status, 'calls').error).toMatchObject({ reason: 'non_retryable', code: 'http_4xx' });
  });

  it('a loop stops when its condition holds, and one that never holds ends at its bound', async () => {
    const done = await run([
      {
        id: 'count',
        template_id: g.tpl.transform._id,
        loop: { until: 'steps.count.output.n >= 3', max_iterations: 10 },
        config: { expression: '{"n": i, "prev": p}', data: { i: '{{loop.iteration}}', p: '{{loop.previous}}' } },
      },
    ]);
    expect(done.status.status).toBe('completed');
    expect(done.status.outputs.count).toEqual({ n: 3, prev: { n: 2, prev: { n: 1, prev: null } } });
    const iterations = stepOf(done.status, 'count').executions!;
    expect(iterations.counts).toMatchObject({ total: 3, completed: 3 });
    expect(iterations.shown.map((e) => e.exec_id)).toEqual(['count#1', 'count#2', 'count#3']);

    const bound = await run([
      {
        id: 'forever',
        template_id: g.tpl.transform._id,
        loop: { until: 'false || steps.forever.output == "never"', max_iterations: 4 },
        config: { expression: '"again"' },
      },
    ]);
    expect(bound.status.status).toBe('failed');
    expect(bound.status.error).toMatchObject({ step_id: 'forever', reason: 'loop_limit' });
    expect(stepOf(bound.status, 'forever').executions!.counts).toMatchObject({ total: 4, completed: 4 });
  });

  it('an error branch: the failure is recorded as the step output and a condition routes on it', async () => {
    g.sink.route('/flaky-service', { status: 404 });
    const { status } = await run([
      {
        id: 'call',
        template_id: g.tpl.http_request._id,
        on_error: 'continue',
        config: { url: g.sink.url('/flaky-service') },
      },
      {
        id: 'fallback',
        template_id: g.tpl.transform._id,
        depends_on: ['call'],
        when: 'steps.call.status == "failed"',
        config: { expression: '{"note": "used the fallback", "saw": e}', data: { e: '{{steps.call.output.error}}' } },
      },
      {
        id: 'normal',
        template_id: g.tpl.transform._id,
        depends_on: ['call'],
        when: 'steps.call.status == "completed"',
        config: { expression: '"normal path"' },
      },
    ]);
    expect(status.status).toBe('completed');
    expect(stepOf(status, 'call').status).toBe('failed');
    expect(stepOf(status, 'fallback').status).toBe('completed');
    expect(stepOf(status, 'normal').status).toBe('skipped');
    // The status shows what the next step read: the failed step's output is its error, code included.
    const error = { reason: 'non_retryable', message: expect.stringContaining('404'), code: 'http_4xx' };
    expect(status.outputs.fallback).toEqual({ note: 'used the fallback', saw: error });
    expect(status.outputs.call).toEqual({ error });
    expect(stepOf(status, 'call').output).toEqual({ error });
    expect(stepOf(status, 'call').error).toEqual(error);
  });

  it('runs a sub-workflow as a child run with its own id, readable at the status endpoint', async () => {
    const child = await createWorkflow(g.api, g.user, {
      name: uniqueId('child'),
      steps: [
        { id: 'double', template_id: g.tpl.transform._id, config: { expression: 'n * 2', data: { n: '{{input.n}}' } } },
      ],
    });
    const { runId, status } = await run(
      [
        { id: 'sub', workflow_id: child, input: { n: '{{input.n}}' } },
        {
          id: 'after',
          template_id: g.tpl.transform._id,
          config: { expression: 'x + 1', data: { x: '{{steps.sub.output.double}}' } },
        },
      ],
      { n: 21 },
    );
    expect(status.status).toBe('completed');
    expect(status.outputs.after).toBe(43);
    const childRunId = stepOf(status, 'sub').child_run_id;
    expect(childRunId).toBe(`${runId}.sub`);
    const childStatus = await waitForStatus(g.api, g.user, childRunId!, isTerminal);
    expect(childStatus).toMatchObject({ status: 'completed', outputs: { double: 42 } });
    const childTemporal = (childStatus as unknown as { temporal: { workflow_id: string; run_id: string | null } })
      .temporal;
    expect(childTemporal.workflow_id).toBe(childRunId);
    expect(childTemporal.run_id).toEqual(expect.any(String));
    // The parent's Temporal run id reached its record with the worker's first write (the API's start writes none).
    const parentTemporal = (status as unknown as { temporal: { run_id: string | null } }).temporal;
    expect(parentTemporal.run_id).toBe((await g.api.temporal.workflow.getHandle(runId).describe()).runId);
  });

  it('two approvals in parallel branches wait at once and are decided separately', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('approvals'),
      steps: [
        { id: 'legal', template_id: g.tpl.approval._id, depends_on: [], config: { message: 'legal ok?' } },
        { id: 'finance', template_id: g.tpl.approval._id, depends_on: [], config: { message: 'finance ok?' } },
        {
          id: 'go',
          template_id: g.tpl.transform._id,
          depends_on: ['legal', 'finance'],
          config: { expression: '"go"' },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, wf);
    const both = await waitForStatus(
      g.api,
      g.user,
      runId,
      (s) => s.steps.filter((x) => x.status === 'waiting').length === 2,
    );
    expect(both.status).toBe('waiting');
    const approve = (step_id: string) =>
      g.api.http.post(`/api/v1/workflows/runs/${runId}/approve`).set(g.user.auth).send({ step_id, approved: true });
    expect((await approve('finance')).status).toBe(200);
    const one = await waitForStatus(g.api, g.user, runId, (s) => stepOf(s, 'finance').status === 'completed');
    expect(stepOf(one, 'legal').status).toBe('waiting');
    expect(one.status).toBe('waiting');
    expect((await approve('finance')).status).toBe(409);
    expect((await approve('legal')).status).toBe(200);
    const end = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(end.status).toBe('completed');
    expect(end.outputs.go).toBe('go');
  });

  it('cancelling during a map stops every running item and records each as cancelled', async () => {
    g.sink.route('/slow', { hang: true });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('cancel-map'),
      steps: [
        {
          id: 'calls',
          template_id: g.tpl.http_request._id,
          map: { over: '{{input.items}}', concurrency: 3 },
          config: { url: g.sink.url('/slow'), timeout_seconds: 120 },
          timeout_seconds: 120,
        },
      ],
    });
    const runId = await startRun(g.api, g.user, wf, { items: [1, 2, 3, 4, 5, 6] });
    await waitForStatus(g.api, g.user, runId, (s) => (stepOf(s, 'calls').executions?.counts.running ?? 0) === 3);
    expect((await g.api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(g.user.auth).send({})).status).toBe(
      202,
    );
    const end = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(end.status).toBe('cancelled');
    const ex = stepOf(end, 'calls').executions!;
    expect(ex.counts).toMatchObject({ total: 6, running: 0, completed: 0 });
    expect(ex.shown.filter((e) => e.status === 'failed').every((e) => e.error?.reason === 'cancelled')).toBe(true);
    expect(ex.shown.filter((e) => e.status === 'failed')).toHaveLength(3);
  });
});
