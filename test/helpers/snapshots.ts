/**
 * Run snapshots for tests that write the projection directly (no API, no workflow): the smallest valid steps and a
 * snapshot around them. The fields a test cares about are its arguments; the rest are fixed placeholders.
 */
import type { ActionStepSnapshot, AgentStepSnapshot, RunSnapshot, StepSnapshot } from '../../domain/run';
import type { ActionType } from '../../domain/action-types';
import type { Db } from 'mongodb';
import { insertRun, newRunDoc } from '../../db/runs';

const common = {
  template_id: 'tpl_x',
  template_name: 't',
  input: null,
  retry: { max_attempts: 3 },
  timeout_seconds: 60,
};

export function actionStep(id: string, actionType: ActionType = 'transform'): ActionStepSnapshot {
  return { ...common, id, kind: 'action', action_type: actionType, config: {} };
}

export function agentStep(id: string, model = 'openai:gpt-4o-mini'): AgentStepSnapshot {
  return { ...common, id, kind: 'agent', prompt: 'p', tasks: [], tools: [], model, max_turns: 8 };
}

export function testSnapshot(runId: string, steps: StepSnapshot[], fields: Partial<RunSnapshot> = {}): RunSnapshot {
  return {
    run_id: runId,
    workflow_id: 'wf_x',
    workflow_name: 'w',
    owner_id: 'usr_owner',
    input: {},
    created_at: new Date().toISOString(),
    steps,
    ...fields,
  };
}

/** Stores a new run of `steps` (queued, none started) under `runId`, as the API would; returns the id. */
export async function insertTestRun(db: Db, runId: string, steps: StepSnapshot[]): Promise<string> {
  await insertRun(db, newRunDoc({ snapshot: testSnapshot(runId, steps), namespace: 'default', taskQueue: 'q' }));
  return runId;
}
