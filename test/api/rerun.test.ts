/**
 * Rerun from a failed step on real runs: the scripted model, the SMTP server and the HTTP sink count every call, so
 * the test proves that the steps before the failure made none again; the new run reuses their outputs, links to the
 * old one both ways, and honours Idempotency-Key; the refusals answer with the envelope.
 */
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { readSse } from '../helpers/sse';
import { uniqueId } from '../helpers/stack';
import { createTestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

interface RerunBody {
  run_id: string;
  rerun_of: string;
  from_step: string;
  reused_steps: string[];
  status_url: string;
}

describe('rerun from a failed step', () => {
  let g: GraphStack;

  beforeAll(async () => {
    g = await startGraphStack();
  }, 60_000);
  afterAll(() => g?.stop());

  const rerun = (runId: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    g.api.http.post(`/api/v1/workflows/runs/${runId}/rerun`).set(g.user.auth).set(headers).send(body);

  /** draft (agent) → mail (send_email) → publish (HTTP, fails the first time) → shape (transform). */
  const fourSteps = async () => {
    const model = g.llm.script(uniqueId('rerun-'), [{ text: 'A short draft', usage: { input: 10, output: 4 } }]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('writer'),
      default_prompt: 'Write.',
      default_tools: [],
      model: `openai:${model.model}`,
    });
    const path = `/${uniqueId('publish')}`;
    g.sink.route(path, { status: 500, body: 'down' });
    const to = `${uniqueId('reader')}@example.com`;
    const workflowId = await createWorkflow(g.api, g.user, {
      name: uniqueId('four'),
      steps: [
        { id: 'draft', template_id: agent._id, input: 'Write about rivers' },
        {
          id: 'mail',
          template_id: g.tpl.send_email._id,
          config: { to, subject: 'Draft', text: '{{steps.draft.output}}' },
        },
        {
          id: 'publish',
          template_id: g.tpl.http_request._id,
          retry: { max_attempts: 1 },
          config: { url: g.sink.url(path), method: 'POST', body: { text: '{{steps.draft.output}}' } },
        },
        {
          id: 'shape',
          template_id: g.tpl.transform._id,
          config: { expression: '{"published": status}', data: '{{steps.publish.output}}' },
        },
      ],
    });
    return { model, path, to, workflowId };
  };

  it('reruns from the failed step 3 of 4: steps 1–2 make no new model call, e-mail or request', async () => {
    const { model, path, to, workflowId } = await fourSteps();
    const first = await startRun(g.api, g.user, workflowId);
    const failed = await waitForStatus(g.api, g.user, first, isTerminal);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ step_id: 'publish' });
    expect(model.requests).toHaveLength(1);
    const mailsTo = () => g.smtp.messages.filter((m) => m.envelope.to.includes(to)).length;
    expect(mailsTo()).toBe(1);
    expect(g.sink.requestsTo(path)).toHaveLength(1);

    // The service is back; rerun without naming a step: it starts at the failed one.
    g.sink.route(path, { status: 200, body: { ok: true } });
    const res = await rerun(first, {}, { 'Idempotency-Key': `rerun-${first}` });
    expect(res.status).toBe(202);
    const body = (res.body as { data: RerunBody }).data;
    expect(body).toMatchObject({ rerun_of: first, from_step: 'publish', reused_steps: ['draft', 'mail'] });
    expect(res.headers.location).toBe(body.status_url);
    const second = await waitForStatus(g.api, g.user, body.run_id, isTerminal);
    expect(second.status).toBe('completed');
    expect(second.outputs).toMatchObject({ draft: 'A short draft', shape: { published: 200 } });
    expect(second.steps.map((s) => [s.id, s.status, s.reused_from_run_id])).toEqual([
      ['draft', 'completed', first],
      ['mail', 'completed', first],
      ['publish', 'completed', null],
      ['shape', 'completed', null],
    ]);
    expect(second.rerun_of).toBe(first);
    expect(second.usage).toEqual({ llm_calls: 0, input_tokens: 0, output_tokens: 0 });
    // No new model call, no new e-mail; the failed request made once more, with the reused draft.
    expect(model.requests).toHaveLength(1);
    expect(mailsTo()).toBe(1);
    expect(g.sink.requestsTo(path)).toHaveLength(2);
    expect(JSON.parse(g.sink.requestsTo(path)[1]!.text)).toEqual({ text: 'A short draft' });
    const old = await waitForStatus(g.api, g.user, first, isTerminal);
    expect(old.reruns).toEqual([body.run_id]);

    // Its event log starts with the reused steps, completed, naming the run they came from.
    const events = await readSse(`${await g.api.listen()}/api/v1/workflows/runs/${body.run_id}/events`, {
      headers: { Authorization: g.user.auth.Authorization },
    });
    expect(events.events.slice(0, 2).map((e) => [e.event, e.data.exec_id, e.data.reused_from_run_id])).toEqual([
      ['step.completed', 'draft', first],
      ['step.completed', 'mail', first],
    ]);
    expect(events.events.at(-1)?.data).toMatchObject({ status: 'completed' });

    // The same key again: the same run. The same key for another request: 422.
    const again = await rerun(first, {}, { 'Idempotency-Key': `rerun-${first}` });
    expect(again.status).toBe(202);
    expect((again.body as { data: RerunBody }).data.run_id).toBe(body.run_id);
    const mismatch = await rerun(first, { from_step: 'mail' }, { 'Idempotency-Key': `rerun-${first}` });
    expect(mismatch.status).toBe(422);

    // A completed run reruns from a named step: the steps before it are reused again (from the run rerun).
    const third = await rerun(body.run_id, { from_step: 'shape' });
    expect(third.status).toBe(202);
    expect((third.body as { data: RerunBody }).data.reused_steps).toEqual(['draft', 'mail', 'publish']);
    const done = await waitForStatus(g.api, g.user, (third.body as { data: RerunBody }).data.run_id, isTerminal);
    expect(done).toMatchObject({ status: 'completed', outputs: { shape: { published: 200 } } });
    expect(g.sink.requestsTo(path)).toHaveLength(2);
    expect(model.requests).toHaveLength(1);
  }, 90_000);

  it("recovers from a model mistake: the rerun overrides the agent step's model, records and shows it", async () => {
    // The step's model names a provider this stack has not configured (no LLM_BASE_URL): the run fails with
    // llm_not_configured; the rerun names a configured model instead and completes.
    const model = g.llm.script(uniqueId('fixed-'), [{ text: 'Fixed draft' }]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('writer'),
      default_prompt: 'Write.',
      default_tools: [],
      model: 'compat:not-served-here',
    });
    const workflowId = await createWorkflow(g.api, g.user, {
      name: uniqueId('model-fix'),
      steps: [
        { id: 'draft', template_id: agent._id, input: 'Write about rivers' },
        {
          id: 'shape',
          template_id: g.tpl.transform._id,
          config: { expression: '{"text": t}', data: { t: '{{steps.draft.output}}' } },
        },
      ],
    });
    const first = await startRun(g.api, g.user, workflowId);
    const failed = await waitForStatus(g.api, g.user, first, isTerminal);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ step_id: 'draft' });
    // The step's failure says how to recover this run once a provider is configured.
    const draftError = failed.steps.find((s) => s.id === 'draft')?.error;
    expect(draftError?.message).toContain('needs LLM_BASE_URL');
    expect(draftError?.message).toContain('rerun it with a model override');

    const overrides = { draft: { model: `openai:${model.model}` } };
    const res = await rerun(first, { overrides });
    expect(res.status).toBe(202);
    const body = (res.body as { data: RerunBody & { overrides: unknown } }).data;
    expect(body).toMatchObject({ from_step: 'draft', reused_steps: [], overrides });
    const second = await waitForStatus(g.api, g.user, body.run_id, isTerminal);
    expect(second).toMatchObject({ status: 'completed', outputs: { shape: { text: 'Fixed draft' } } });
    expect((second as unknown as { rerun_overrides: unknown }).rerun_overrides).toEqual(overrides);
    expect(model.requests).toHaveLength(1);
    // A rerun without overrides shows none.
    expect((failed as unknown as { rerun_overrides: unknown }).rerun_overrides).toBeNull();

    // Overriding a completed step runs it again (and what depends on it), even when from_step comes later.
    const other = g.llm.script(uniqueId('other-'), [{ text: 'Other draft' }]);
    const third = await rerun(body.run_id, {
      from_step: 'shape',
      overrides: { draft: { model: `openai:${other.model}` } },
    });
    expect(third.status).toBe(202);
    expect((third.body as { data: RerunBody }).data.reused_steps).toEqual([]);
    const done = await waitForStatus(g.api, g.user, (third.body as { data: RerunBody }).data.run_id, isTerminal);
    expect(done).toMatchObject({ status: 'completed', outputs: { shape: { text: 'Other draft' } } });

    // A completed run with overrides and no from_step runs again from the overridden step.
    const again = g.llm.script(uniqueId('again-'), [{ text: 'Again draft' }]);
    const fourth = await rerun((third.body as { data: RerunBody }).data.run_id, {
      overrides: { draft: { model: `openai:${again.model}` } },
    });
    expect(fourth.status).toBe(202);
    expect((fourth.body as { data: RerunBody }).data).toMatchObject({ from_step: 'draft', reused_steps: [] });
    const fourthDone = await waitForStatus(g.api, g.user, (fourth.body as { data: RerunBody }).data.run_id, isTerminal);
    expect(fourthDone).toMatchObject({ status: 'completed', outputs: { shape: { text: 'Again draft' } } });
    // Without overrides, a completed run still needs the step named.
    const unnamed = await rerun((fourth.body as { data: RerunBody }).data.run_id, {});
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error).toContain('from_step');

    // Overrides name agent steps of the run, with a well-formed model.
    const refused = async (o: unknown) => {
      const r = await rerun(first, { overrides: o });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain('overrides');
    };
    await refused({ nope: { model: 'openai:x' } });
    await refused({ shape: { model: 'openai:x' } });
    await refused({ draft: { model: 'gpt-4o' } });
    await refused({ draft: { temperature: 2 } });
    // Control characters (tab, ESC, DEL) and spaces are no part of a model name.
    for (const bad of ['openai:gpt\t4o', 'openai:gpt-4o\u001b[31m', 'openai:gpt\u007f', 'openai:gpt 4o']) {
      await refused({ draft: { model: bad } });
    }
  }, 90_000);

  it('refuses what cannot be rerun, with the envelope', async () => {
    const { workflowId } = await fourSteps();
    const runId = await startRun(g.api, g.user, workflowId);
    // Not ended yet (or just ended: then the named step is unknown) — wait for the end for a stable answer.
    await waitForStatus(g.api, g.user, runId, isTerminal);
    const unknownStep = await rerun(runId, { from_step: 'nope' });
    expect(unknownStep.status).toBe(400);
    expect(unknownStep.body.error).toContain('from_step');
    expect((await rerun(runId, { from_step: 'publish[0]' })).status).toBe(400);
    expect((await rerun(runId, { from_step: 'publish', extra: 1 })).status).toBe(400);
    expect((await rerun(runId, { from_step: 7 })).status).toBe(400);
    const other = await createTestUser(g.api.database.db);
    expect((await g.api.http.post(`/api/v1/workflows/runs/${runId}/rerun`).set(other.auth).send({})).status).toBe(404);
    expect((await g.api.http.post(`/api/v1/workflows/runs/${runId}/rerun`).send({})).status).toBe(401);
    expect((await rerun('run_doesnotexist123')).status).toBe(404);

    // A run still waiting: 409.
    const gate = await createWorkflow(g.api, g.user, {
      name: uniqueId('gate'),
      steps: [{ id: 'gate', template_id: g.tpl.approval._id, config: { message: 'ok?' } }],
    });
    const waiting = await startRun(g.api, g.user, gate);
    await waitForStatus(g.api, g.user, waiting, (s) => s.status === 'waiting');
    const busy = await rerun(waiting);
    expect(busy.status).toBe(409);
    await g.api.http.post(`/api/v1/workflows/runs/${waiting}/cancel`).set(g.user.auth).expect(202);
    await waitForStatus(g.api, g.user, waiting, isTerminal);
  }, 60_000);
});
