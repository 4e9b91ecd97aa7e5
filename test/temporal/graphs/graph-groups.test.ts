/**
 * Groups of steps and steps inside maps and loops, on the real stack: a draft → critique loop whose body is a
 * sub-workflow of two agent steps (scripted models), stopping on the critic's approval and, in another run, at its
 * bound; approvals inside a map decided one by one by execution id; an agent step mapped over a list (per-item
 * transcripts); and paging through a map's executions.
 */
import type { JsonObject } from '../../../domain/json';
import { startGraphStack, type GraphStack } from '../../helpers/graph-stack';
import { uniqueId } from '../../helpers/stack';
import {
  createWorkflow,
  insertTemplate,
  isTerminal,
  startRun,
  temporalFinalStatus,
  waitForStatus,
  type StatusBody,
} from '../../helpers/workflows';

interface Exec {
  exec_id: string;
  status: string;
  child_run_id: string | null;
  output: unknown;
}
const execsOf = (s: StatusBody, id: string) =>
  (s.steps.find((x) => x.id === id) as unknown as { executions: { counts: Record<string, number>; shown: Exec[] } })
    .executions;

describe('groups, and steps inside maps and loops', () => {
  let g: GraphStack;
  beforeAll(async () => {
    g = await startGraphStack();
  });
  afterAll(async () => {
    await g?.stop();
  });

  const agent = async (model: string, outputSchema?: JsonObject) =>
    insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('agent'),
      default_prompt: 'Do the task.',
      default_tools: [],
      model: `openai:${model}`,
      ...(outputSchema ? { output_schema: outputSchema } : {}),
    });

  /** A sub-workflow `draft → critique` and a parent that loops over it until the critic approves. */
  const draftCritique = async (verdicts: boolean[], maxIterations: number) => {
    const drafter = g.llm.script(uniqueId('drafter-'), (_req, i) => ({ text: `draft ${i + 1}` }));
    const critic = g.llm.script(uniqueId('critic-'), (_req, i) => ({
      text: JSON.stringify({ approved: verdicts[Math.min(i, verdicts.length - 1)], note: `review ${i + 1}` }),
    }));
    const draftTpl = await agent(drafter.model);
    const criticTpl = await agent(critic.model, {
      type: 'object',
      properties: { approved: { type: 'boolean' }, note: { type: 'string' } },
      required: ['approved'],
    });
    const body = await createWorkflow(g.api, g.user, {
      name: uniqueId('draft-critique'),
      config: {
        input_schema: { type: 'object', required: ['topic'], properties: { topic: { type: 'string' }, previous: {} } },
      },
      steps: [
        {
          id: 'draft',
          template_id: draftTpl._id,
          input: 'Write about {{input.topic}}. Last round: {{input.previous}}',
        },
        { id: 'critique', template_id: criticTpl._id, input: 'Review: {{steps.draft.output}}' },
      ],
    });
    const parent = await createWorkflow(g.api, g.user, {
      name: uniqueId('refine'),
      steps: [
        {
          id: 'refine',
          workflow_id: body,
          input: { topic: '{{input.topic}}', previous: '{{loop.previous}}' },
          loop: { until: 'steps.refine.output.critique.approved == true', max_iterations: maxIterations },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, parent, { topic: 'rivers' });
    return { runId, status: await waitForStatus(g.api, g.user, runId, isTerminal, 60_000), drafter };
  };

  it('draft → critique (a sub-workflow) loops until the critic approves', async () => {
    const { runId, status, drafter } = await draftCritique([false, true], 5);
    expect(status.status).toBe('completed');
    expect(status.outputs.refine).toEqual({ draft: 'draft 2', critique: { approved: true, note: 'review 2' } });
    const it = execsOf(status, 'refine');
    expect(it.counts).toMatchObject({ total: 2, completed: 2 });
    expect(it.shown.map((e) => [e.exec_id, e.child_run_id])).toEqual([
      ['refine#1', `${runId}.refine~i1`],
      ['refine#2', `${runId}.refine~i2`],
    ]);
    // The second iteration saw the first one's outputs.
    const secondPrompt = JSON.stringify(drafter.requests[1]?.body);
    expect(secondPrompt).toContain('draft 1');
    // Two iterations of two model calls: counted once in the status and in the workflow's result.
    expect((status as unknown as { usage: { llm_calls: number } }).usage.llm_calls).toBe(4);
    const result = (await g.api.temporal.workflow.getHandle(runId).result()) as { usage: { llm_calls: number } };
    expect(result.usage.llm_calls).toBe(4);
    // Each iteration is a run of its own.
    const child = await waitForStatus(g.api, g.user, `${runId}.refine~i1`, isTerminal);
    expect(child).toMatchObject({ status: 'completed', outputs: { draft: 'draft 1' } });
  });

  it('a draft → critique loop that never gets approval ends at its bound with loop_limit', async () => {
    const { status } = await draftCritique([false], 2);
    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'refine', reason: 'loop_limit' });
    expect(execsOf(status, 'refine').counts).toMatchObject({ total: 2, completed: 2 });
  });

  it('approvals inside a map wait at once and are decided one by one by execution id', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('map-approvals'),
      steps: [
        {
          id: 'review',
          template_id: g.tpl.approval._id,
          map: { over: '{{input.docs}}', concurrency: 3 },
          config: { message: 'Publish {{map.item}}?' },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, wf, { docs: ['a', 'b', 'c'] });
    const waiting = await waitForStatus(g.api, g.user, runId, (s) => execsOf(s, 'review')?.counts.waiting === 3);
    expect(waiting.status).toBe('waiting');
    const approve = (step_id: string, approved = true) =>
      g.api.http.post(`/api/v1/workflows/runs/${runId}/approve`).set(g.user.auth).send({ step_id, approved });
    expect((await approve('review')).status).toBe(400); // a map: name one item
    for (const id of ['review[2]', 'review[0]', 'review[1]']) expect((await approve(id)).status).toBe(200);
    expect((await approve('review[1]')).status).toBe(409);
    const end = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(end.status).toBe('completed');
    expect((end.outputs.review as { approved: boolean }[]).map((o) => o.approved)).toEqual([true, true, true]);
  });

  it('an agent step mapped over a list: one conversation per item, each with its own transcript', async () => {
    const model = g.llm.script(uniqueId('mapper-'), (req) => {
      const last = JSON.stringify(req.body.messages).match(/City: (\w+)/)?.[1] ?? '?';
      return { text: `capital of ${last}` };
    });
    const tpl = await agent(model.model);
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('agent-map'),
      steps: [
        {
          id: 'ask',
          template_id: tpl._id,
          input: 'City: {{map.item}}',
          map: { over: '{{input.cities}}', concurrency: 2 },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, wf, { cities: ['Paris', 'Rome', 'Oslo'] });
    const status = await waitForStatus(g.api, g.user, runId, isTerminal, 60_000);
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toEqual(['capital of Paris', 'capital of Rome', 'capital of Oslo']);
    const transcript = await g.api.http
      .get(`/api/v1/workflows/runs/${runId}/steps/${encodeURIComponent('ask[1]')}/transcript`)
      .set(g.user.auth);
    expect(transcript.status).toBe(200);
    expect(JSON.stringify(transcript.body.data)).toContain('City: Rome');
    expect(JSON.stringify(transcript.body.data)).not.toContain('City: Paris');
  });

  it('cancelling a run stops its sub-workflow: the child run ends cancelled too', async () => {
    const childName = uniqueId('child-wait');
    const child = await createWorkflow(g.api, g.user, {
      name: childName,
      steps: [{ id: 'hold', template_id: g.tpl.approval._id, config: { message: 'never decided' } }],
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('parent'),
      steps: [{ id: 'sub', workflow_id: child }],
    });
    const runId = await startRun(g.api, g.user, wf);
    const childId = `${runId}.sub`;
    // The parent records the child's run before starting it; then the child runs into its approval.
    await waitForStatus(
      g.api,
      g.user,
      runId,
      (s) => (s.steps[0] as unknown as { child_run_id: string | null }).child_run_id === childId,
    );
    await waitForStatus(g.api, g.user, childId, (s) => s.status === 'waiting');
    // The Web UI's filters find the child run by its own workflow, like any run.
    const described = await g.api.temporal.workflow.getHandle(childId).describe();
    expect(described.searchAttributes).toMatchObject({
      StepwiseWorkflowId: [child],
      StepwiseWorkflowName: [childName],
      StepwiseOwnerId: [g.user.id],
    });
    const cancel = await g.api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(g.user.auth).send({});
    expect(cancel.status).toBe(202);
    const parent = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(parent.status).toBe('cancelled');
    // Recorded by the workflow itself (a local activity after the child's cancellation), not left to the reconciler.
    // (The local activity's marker is in the history once the execution has closed.)
    expect(await temporalFinalStatus(g.api, runId)).toBe('CANCELLED');
    const history = await g.api.temporal.workflow.getHandle(runId).fetchHistory();
    const types = (history.events ?? []).map((e) => Number(e.eventType));
    const CHILD_CANCELED = 34;
    const MARKER = 25;
    expect(types.indexOf(CHILD_CANCELED)).toBeGreaterThan(0);
    expect(types.slice(types.indexOf(CHILD_CANCELED)).includes(MARKER)).toBe(true);
    expect(parent.steps[0]).toMatchObject({ status: 'failed', error: { reason: 'cancelled' } });
    const childEnd = await waitForStatus(g.api, g.user, childId, isTerminal);
    expect(childEnd.status).toBe('cancelled');
  });

  it('maps over a list stored by reference (over 64 KiB): each item reaches its activity', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('big-list'),
      steps: [
        // 120 items of 700 characters: about 85 KB, kept in the blob store and passed by reference.
        {
          id: 'make',
          template_id: g.tpl.transform._id,
          config: { expression: '[1..120].($pad("x", 700, "-") & $string($))' },
        },
        {
          id: 'len',
          template_id: g.tpl.transform._id,
          map: { over: '{{steps.make.output}}', concurrency: 10 },
          config: { expression: '$length(s)', data: { s: '{{map.item}}' } },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, wf);
    const status = await waitForStatus(g.api, g.user, runId, isTerminal, 60_000);
    expect(status.status).toBe('completed');
    const make = status.steps.find((s) => s.id === 'make')!;
    expect(make.output).toMatchObject({ stored_by_reference: true });
    expect(status.outputs.len).toEqual(Array.from({ length: 120 }, (_, i) => 700 + String(i + 1).length));
  });

  it('pages through a map step executions with Link headers', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('paged'),
      steps: [
        {
          id: 'sq',
          template_id: g.tpl.transform._id,
          map: { over: '{{input.n}}', concurrency: 10 },
          config: { expression: 'x * x', data: { x: '{{map.item}}' } },
        },
      ],
    });
    const n = Array.from({ length: 12 }, (_, i) => i);
    const runId = await startRun(g.api, g.user, wf, { n });
    await waitForStatus(g.api, g.user, runId, isTerminal);
    const seen: string[] = [];
    let url: string | null = `/api/v1/workflows/runs/${runId}/steps/sq/executions?limit=5`;
    while (url) {
      const res: { status: number; body: { data: Exec[] }; headers: Record<string, string> } = await g.api.http
        .get(url)
        .set(g.user.auth);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((e) => e.exec_id));
      const next = res.headers.link ? new URL(/<([^>]+)>/.exec(res.headers.link)![1]!) : null;
      url = next ? next.pathname + next.search : null;
    }
    expect(seen).toEqual(n.map((i) => `sq[${i}]`));
    const other = await g.api.http.get(`/api/v1/workflows/runs/${runId}/steps/nope/executions`).set(g.user.auth);
    expect(other.status).toBe(404);
  });
});
