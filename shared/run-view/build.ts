/**
 * A run's status body from storage: the reads (db/run-view) then the presenter (./view.ts). The API's status endpoint
 * and the worker's webhook body both build the view through here, so the webhook's `data` is exactly what endpoint 8
 * answers.
 */
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { resolveOutputs } from './outputs';
import { readRunExecutions, readRunWebhooks } from './reads';
import type { RunDoc } from '../../db/runs';
import { EXECUTIONS_SHOWN, presentRun, type RunView } from './view';

type StoredRun = Omit<RunDoc, 'snapshot'>;

export async function buildRunView(
  db: Db,
  run: StoredRun,
  config: Pick<Config, 'TEMPORAL_UI_URL'>,
  opts: { resolveLarge?: boolean } = {},
): Promise<RunView> {
  const [outputs, executions, webhooks] = await Promise.all([
    resolveOutputs(db, run, opts),
    readRunExecutions(db, run, EXECUTIONS_SHOWN),
    readRunWebhooks(db, run),
  ]);
  return presentRun(run, outputs, config, executions, webhooks);
}
