/**
 * Map items and loop iterations for the status view: the first page of each map or loop step with its counts (two
 * reads per such step; runs without maps or loops cost nothing more), and the owner check of the paging endpoint.
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
