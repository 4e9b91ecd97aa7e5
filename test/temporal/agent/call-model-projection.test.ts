/**
 * The callModel activity recording its agent step (CallModelInput.project, patch `agent-projections`), in
 * MockActivityEnvironment against the real database and the scripted OpenAI-compatible HTTP server: the first call
 * marks the step running with its input and the turn in flight, a final answer marks it completed with the step's
 * totals after the event of the call itself (and the run's end, when the workflow says nothing else is left), and a
 * final answer the run's token budget will refuse is left to the workflow (which fails the step).
 */
import type { Database } from '../../../db/client';
import { runsCollection } from '../../../db/runs';
import type { CallModelInput } from '../../../temporal/activities/agent/types';
import type { LlmServer, ModelScript } from '../../helpers/llm-server';
import { readRunEvents } from '../../helpers/run-events';
import { uniqueId } from '../../helpers/stack';
import { firstCall, newAgentRun, startCallModelHarness, type CallModelHarness } from './call-model-fixtures';

const ZERO = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };

describe('callModel recording its agent step', () => {
  let harness: CallModelHarness;
  let llm: LlmServer;
  let database: Database;

  beforeAll(async () => {
    harness = await startCallModelHarness();
    ({ llm, database } = harness);
  });
  afterAll(async () => {
    await harness?.close();
  });

  const call = (req: CallModelInput) => harness.attempt(1, req);
  const stepOf = async (runId: string) => (await runsCollection(database.db).findOne({ _id: runId }))!.steps[0]!;
  const eventTypes = async (runId: string) =>
    (await readRunEvents(database.db, runId, { afterSeq: 0, counter: 100, limit: 100 })).map((e) => e.type);

  async function start(script: ModelScript) {
    const owner = uniqueId('usr_');
    const runId = await newAgentRun(database.db, owner, script);
    return { runId, first: firstCall(runId, owner, script) };
  }

  it('marks the step running with its input on the first call, and completed with its totals on the final answer', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }], usage: { input: 20, output: 10 } },
      { text: '42', usage: { input: 40, output: 5 } },
    ]);
    const { runId, first } = await start(script);

    const asked = await call({ ...first, project: { usage_before: ZERO, tokens_left: null } });
    expect(asked.kind).toBe('tool_calls');
    expect(await stepOf(runId)).toMatchObject({
      status: 'running',
      attempts: 1,
      input_json: JSON.stringify('What is 6 times 7?'),
      turns: 1,
      usage: { llm_calls: 1, input_tokens: 20, output_tokens: 10 },
    });

    const usageBefore = { llm_calls: 1, input_tokens: 20, output_tokens: 10 };
    const { setup: _setup, ...rest } = first;
    const answered = await call({
      ...rest,
      turn: 2,
      seq: asked.next_seq,
      project: { usage_before: usageBefore, tokens_left: null },
    });
    expect(answered).toMatchObject({ kind: 'final', output: '42', projected: true });
    expect(await stepOf(runId)).toMatchObject({
      status: 'completed',
      output_json: JSON.stringify('42'),
      turns: 2,
      usage: { llm_calls: 2, input_tokens: 60, output_tokens: 15 },
    });
    // The call's own event comes before the step's end.
    // Each call's event comes after its live text (the final answer's); the step's end after both.
    expect(await eventTypes(runId)).toEqual([
      'step.started',
      'agent.model_call',
      'agent.text.delta',
      'agent.model_call',
      'step.completed',
    ]);
  });

  it("logs the call's event even when the run ended while the model was thinking", async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }] },
      { text: '42' },
    ]);
    const { runId, first } = await start(script);
    const asked = await call({ ...first, project: { usage_before: ZERO, tokens_left: null } });
    // The run's record says it ended between the two calls (the workflow has not told this attempt).
    await runsCollection(database.db).updateOne({ _id: runId }, { $set: { status: 'cancelled' } });
    const { setup: _setup, ...rest } = first;
    const usageBefore = { llm_calls: 1, input_tokens: 0, output_tokens: 0 };
    const answered = await call({
      ...rest,
      turn: 2,
      seq: asked.next_seq,
      project: { usage_before: usageBefore, tokens_left: null },
    });
    expect(answered).toMatchObject({ kind: 'final', projected: true });
    expect(await stepOf(runId)).toMatchObject({ status: 'running' });
    expect(await eventTypes(runId)).toEqual([
      'step.started',
      'agent.model_call',
      'agent.text.delta',
      'agent.model_call',
    ]);
  });

  it('leaves a final answer that goes over the run budget to the workflow', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '42', usage: { input: 20, output: 10 } }]);
    const { runId, first } = await start(script);

    const answered = await call({ ...first, project: { usage_before: ZERO, tokens_left: 29 } });
    expect(answered.kind).toBe('final');
    expect(answered).not.toHaveProperty('projected');
    expect(await runsCollection(database.db).findOne({ _id: runId })).toMatchObject({ status: 'running' });
    expect(await stepOf(runId)).toMatchObject({ status: 'running', turns: 1 });
    expect(await eventTypes(runId)).toEqual(['step.started', 'agent.text.delta', 'agent.model_call']);
  });

  it('without `project` (histories from before it) records the start but not the input or the end', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '42' }]);
    const { runId, first } = await start(script);

    const answered = await call(first);
    expect(answered).toMatchObject({ kind: 'final', output: '42' });
    expect(answered).not.toHaveProperty('projected');
    const step = await stepOf(runId);
    expect(step).toMatchObject({ status: 'running', turns: 1 });
    expect(step.input_json ?? null).toBeNull();
  });
});
