/**
 * Builds run snapshots with agent steps and runs them through the real run workflow on the suite's Temporal server,
 * the way the API does (run document first, then the workflow with id = run id).
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { newRunDoc, runsCollection, type RunDoc } from '../../db/runs';
import { readTranscript, type TranscriptDoc } from '../../db/transcripts';
import type { JsonObject } from '../../temporal/contract/json';
import type { AgentStepSnapshot, RunSnapshot, StepSnapshot } from '../../temporal/contract/run';
import { RUN_WORKFLOW_TYPE } from '../../temporal/contract/task-queue';
import { uniqueId } from './stack';

/** An agent step with test defaults: calculator tool, two tasks, 3 attempts, 10 s timeout. */
export function agentStep(overrides: Partial<AgentStepSnapshot> & { model: string }): AgentStepSnapshot {
  return {
    kind: 'agent',
    id: 'ask',
    template_id: 'tpl_testagent01',
    template_name: 'Test agent',
    input: '{{input.question}}',
    retry: { max_attempts: 3 },
    timeout_seconds: 10,
    prompt: 'You are a careful assistant.',
    tasks: ['Read the question', 'Compute the answer with the calculator'],
    tools: ['calculator'],
    max_turns: 8,
    ...overrides,
  };
}

export function runSnapshot(
  steps: StepSnapshot[],
  input: JsonObject = { question: 'What is 6 times 7?' },
  ownerId = uniqueId('usr_'),
): RunSnapshot {
  return {
    run_id: uniqueId('run_'),
    workflow_id: 'wf_testworkflow1',
    workflow_name: 'agent test',
    // A fresh owner per run by default: the embedded MongoDB server applies the partial idempotency index to runs
    // without a key, so two key-less runs of one owner would collide there.
    owner_id: ownerId,
    input,
    steps,
    created_at: new Date().toISOString(),
  };
}

export interface FinishedRun {
  doc: RunDoc;
  /** The workflow's failure, when it failed. */
  failure: unknown;
}

/** Starts the run workflow for `snapshot` and waits for it to close; returns the projection document. */
export async function runToEnd(
  deps: { db: Db; temporal: Client; taskQueue: string; namespace: string },
  snapshot: RunSnapshot,
): Promise<FinishedRun> {
  await runsCollection(deps.db).insertOne(
    newRunDoc({ snapshot, namespace: deps.namespace, taskQueue: deps.taskQueue }),
  );
  const handle = await deps.temporal.workflow.start(RUN_WORKFLOW_TYPE, {
    taskQueue: deps.taskQueue,
    workflowId: snapshot.run_id,
    args: [snapshot],
  });
  let failure: unknown = null;
  await handle.result().catch((err: unknown) => {
    failure = err;
  });
  const doc = await runsCollection(deps.db).findOne({ _id: snapshot.run_id });
  if (!doc) throw new Error(`run ${snapshot.run_id} has no document`);
  return { doc, failure };
}

export async function transcriptOf(db: Db, runId: string, stepId = 'ask'): Promise<TranscriptDoc[]> {
  return readTranscript(db, runId, stepId);
}
