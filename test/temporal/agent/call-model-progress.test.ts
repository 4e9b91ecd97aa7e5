/**
 * What the callModel activity records, in MockActivityEnvironment against the real database and the scripted
 * OpenAI-compatible HTTP server: each call's turn and the step's usage so far, with the call's event after its live
 * text — never the step's start or end, which the workflow records (temporal/workflows/step.ts: one writer of a step's
 * state). The call's event is logged even when the run ended while the model was thinking.
 */
import type { Database } from '../../../db/client';
import { runsCollection } from '../../../db/runs';
import type { CallModelInput } from '../../../temporal/activities/agent/types';
import type { LlmServer, ModelScript } from '../../helpers/llm-server';
import { readRunEvents } from '../../helpers/run-events';
import { uniqueId } from '../../helpers/stack';
import { firstCall, newAgentRun, startCallModelHarness, type CallModelHarness } from './call-model-fixtures';

describe('callModel recording its turn', () => {
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

  it("records each call's turn and the step's usage, and leaves the step's start and end to the workflow", async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }], usage: { input: 20, output: 10 } },
      { text: '42', usage: { input: 40, output: 5 } },
    ]);
    const { runId, first } = await start(script);
    const before = await stepOf(runId);

    const asked = await call(first);
    expect(asked.kind).toBe('tool_calls');
    expect(await stepOf(runId)).toMatchObject({
      status: before.status,
      turns: 1,
      usage: { llm_calls: 1, input_tokens: 20, output_tokens: 10 },
    });

    const { setup: _setup, ...rest } = first;
    const answered = await call({ ...rest, turn: 2, seq: asked.next_seq });
    expect(answered).toMatchObject({ kind: 'final', output: '42' });
    expect(answered).not.toHaveProperty('projected');
    const step = await stepOf(runId);
    expect(step).toMatchObject({ status: before.status, turns: 2 });
    expect(step.usage).toMatchObject({ llm_calls: 2, input_tokens: 60, output_tokens: 15 });
    expect(step.output_json ?? null).toBeNull();
    // Each call's event comes after its live text (the final answer's).
    expect(await eventTypes(runId)).toEqual(['agent.model_call', 'agent.text.delta', 'agent.model_call']);
  });

  it("logs the call's event even when the run ended while the model was thinking", async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }] },
      { text: '42' },
    ]);
    const { runId, first } = await start(script);
    const asked = await call(first);
    // The run's record says it ended between the two calls (the workflow has not told this attempt).
    await runsCollection(database.db).updateOne({ _id: runId }, { $set: { status: 'cancelled' } });
    const { setup: _setup, ...rest } = first;
    const answered = await call({ ...rest, turn: 2, seq: asked.next_seq });
    expect(answered).toMatchObject({ kind: 'final' });
    expect(await eventTypes(runId)).toEqual(['agent.model_call', 'agent.text.delta', 'agent.model_call']);
  });
});
