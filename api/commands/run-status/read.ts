/**
 * Endpoint 8's read path. The common case is one MongoDB read of the `runs` projection. Only when the projection
 * is non-terminal and has not changed for RUN_STATUS_CHECK_AFTER_SECONDS (or the run's deadline has passed) does it
 * ask Temporal (read-repair.ts): a run Temporal has closed is written terminal, and a run whose next task no worker
 * picks up is reported as stalled instead of silently `running`. Temporal being unreachable never fails the read.
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../../../config';
import { findRun, isTerminal, type RunDoc } from '../../../db/runs';
import { NotFoundError } from '../../errors';
import type { ApiMetrics } from '../../../runtime/metrics/api-metrics';
import { waitForChange, type CloseWatches, type WaitUntil } from './long-poll';
import { checkWithTemporal, needsCheck, repairLostOutputs } from './read-repair';

export type RunView = Omit<RunDoc, 'snapshot'>;

export interface RunStatusDeps {
  config: Config;
  db: Db;
  temporal: Client;
  /** Lets a long poll learn of the run's end from Temporal at once (./long-poll.ts). */
  closeWatches?: CloseWatches;
  apiMetrics?: ApiMetrics;
}

export async function getRunStatus(
  deps: RunStatusDeps,
  ownerId: string,
  runId: string,
  opts: { waitSeconds?: number; until?: WaitUntil } = {},
): Promise<RunView> {
  let run = await findRun(deps.db, ownerId, runId);
  if (!run) throw new NotFoundError(`run ${runId} not found`);
  if (opts.waitSeconds && !isTerminal(run.status))
    run = await waitForChange(deps.db, run, opts.waitSeconds * 1000, deps.closeWatches, opts.until);
  const check = !isTerminal(run.status) && needsCheck(deps.config, run, Date.now());
  deps.apiMetrics?.statusRead(check);
  if (check) run = (await checkWithTemporal(deps, run)) ?? run;
  return repairLostOutputs(deps, run);
}
