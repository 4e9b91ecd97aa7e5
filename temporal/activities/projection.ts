/**
 * Projection writes the run workflow makes as local activities (steps it performs itself and the run's outcome).
 * Idempotent: a replayed or retried write leaves the same document.
 */
import type { Db } from 'mongodb';
import { markStepCompleted, markStepRunning, markStepWaiting, recordRunOutcome } from '../../db/runs';
import type { OutcomeRequest, StepProjection } from '../contract/steps';

export function createProjectionActivities(deps: { db: Db }) {
  return {
    async projectStep({ run_id, step_id, event }: StepProjection): Promise<void> {
      switch (event.kind) {
        case 'running':
          await markStepRunning(deps.db, run_id, step_id, 1);
          return;
        case 'waiting':
          await markStepWaiting(deps.db, run_id, step_id);
          return;
        case 'completed':
          await markStepCompleted(deps.db, run_id, step_id, event.output, event.usage, event.turns);
          return;
      }
    },
    async recordOutcome({ run_id, outcome }: OutcomeRequest): Promise<void> {
      await recordRunOutcome(deps.db, run_id, outcome);
    },
  };
}
