/** A stored run with one agent step and that step's first model call, for tests of the callModel activity alone. */
import type { Db } from 'mongodb';
import { newRunDoc, runsCollection } from '../../../db/runs';
import type { CallModelInput } from '../../../temporal/activities/agent/types';
import type { RunSnapshot } from '../../../temporal/contract/run';
import type { ModelScript } from '../../helpers/llm-server';
import { uniqueId } from '../../helpers/stack';

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
