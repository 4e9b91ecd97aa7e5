/**
 * For tests of the callModel activity alone: the activity over the real database and the scripted LLM server, a
 * stored run with one agent step, and that step's first model call.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Db } from 'mongodb';
import { Registry } from 'prom-client';
import type { Database } from '../../../db/client';
import { newRunDoc, runsCollection } from '../../../db/runs';
import { createWorkerMetrics } from '../../../temporal/metrics';
import { createCallModelActivity } from '../../../temporal/activities/agent/call-model';
import type { CallModelInput, CallModelResult } from '../../../temporal/activities/agent/types';
import type { RunSnapshot } from '../../../domain/run';
import { startLlmServer, type LlmServer, type ModelScript } from '../../helpers/llm-server';
import { openTestDb, silentLogger, testConfig, uniqueId } from '../../helpers/stack';

export interface CallModelHarness {
  llm: LlmServer;
  database: Database;
  /** Runs one attempt (`n`, 1-based) of callModel in a mock activity environment. */
  attempt(n: number, req: CallModelInput): Promise<CallModelResult>;
  close(): Promise<void>;
}

/** Starts the LLM server and opens the test database; `env`: configuration beyond the provider's. */
export async function startCallModelHarness(env: Record<string, string> = {}): Promise<CallModelHarness> {
  const llm = await startLlmServer();
  const config = testConfig({ OPENAI_API_KEY: 'sk-test-callmodel-0123456789', OPENAI_BASE_URL: llm.baseUrl, ...env });
  const database = await openTestDb(config);
  const callModel = createCallModelActivity({
    config,
    db: database.db,
    logger: silentLogger,
    metrics: createWorkerMetrics(new Registry()),
  });
  // Temporal keeps the time an activity was first scheduled across its attempts; so does this harness, per call.
  const scheduled = new Map<string, number>();
  const scheduledAt = (req: CallModelInput) => {
    const key = `${req.run_id}:${req.step_id}:${req.turn}`;
    if (!scheduled.has(key)) scheduled.set(key, Date.now());
    return scheduled.get(key)!;
  };
  return {
    llm,
    database,
    attempt: (n, req) =>
      new MockActivityEnvironment({ attempt: n, scheduledTimestampMs: scheduledAt(req) }).run<
        [CallModelInput],
        CallModelResult,
        typeof callModel
      >(callModel, req),
    close: async () => {
      await database.db.dropDatabase();
      await database.close();
      await llm.close();
    },
  };
}

/** Stores a queued run of one agent step `ask` answering with `script`'s model; returns its id. */
export async function newAgentRun(db: Db, ownerId: string, script: ModelScript): Promise<string> {
  const runId = uniqueId('run_');
  const snapshot: RunSnapshot = {
    run_id: runId,
    workflow_id: 'wf_x',
    workflow_name: 'w',
    owner_id: ownerId,
    input: {},
    created_at: new Date().toISOString(),
    steps: [
      {
        id: 'ask',
        kind: 'agent',
        template_id: 'tpl_x',
        template_name: 't',
        input: null,
        retry: { max_attempts: 3 },
        timeout_seconds: 30,
        prompt: 'Answer.',
        tasks: [],
        tools: [],
        model: `openai:${script.model}`,
        max_turns: 4,
      },
    ],
  };
  await runsCollection(db).insertOne(newRunDoc({ snapshot, namespace: 'default', taskQueue: 'q' }));
  return runId;
}

/** The step's first model call, as the agent loop sends it. */
export const firstCall = (runId: string, ownerId: string, script: ModelScript): CallModelInput => ({
  run_id: runId,
  step_id: 'ask',
  owner_id: ownerId,
  turn: 1,
  seq: 0,
  max_attempts: 3,
  timeout_ms: 10_000,
  setup: {
    prompt: 'Answer.',
    tasks: [],
    tools: [],
    model: `openai:${script.model}`,
    output_schema: null,
    max_turns: 4,
    input: 'What is 6 times 7?',
  },
});
