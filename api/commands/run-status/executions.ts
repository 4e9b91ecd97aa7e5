/**
 * The owner check of the paging route of a run's map items and loop iterations
 * (`GET /api/v1/workflows/runs/:runId/steps/:stepId/executions`); the first page of each is in the status body
 * (shared/run-view/reads.ts).
 */
import type { Db } from 'mongodb';
import { findRun } from '../../../db/runs';
import { NotFoundError } from '../../http/errors';

/** The run (the owner's) and its map or loop step, or 404. */
export async function findRepeatedStep(db: Db, ownerId: string, runId: string, stepId: string) {
  const run = await findRun(db, ownerId, runId);
  if (!run) throw new NotFoundError(`run ${runId} not found`);
  const step = run.steps.find((s) => s.id === stepId);
  if (!step || !step.repeat) throw new NotFoundError(`run ${runId} has no map or loop step "${stepId}"`);
  return { run, step };
}
