/**
 * The worker's side of a handed-off run start (api/commands/worker-starts.ts): it starts a recorded run's execution
 * with a client on the worker's own connection, asking for eager workflow start, so Temporal answers the start with
 * the run's first workflow task and this worker runs it at once, with no trip through the task queue.
 *
 * The request names a run and nothing else: the worker reads the run's record and starts only a run that is queued
 * and not yet in Temporal, with the snapshot the API recorded. Whoever reaches the port can make no start the API
 * would not make a moment later.
 */
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { isId } from '../db/ids';
import { loadedSnapshot, runsCollection } from '../db/runs';
import { startRunExecution } from '../runtime/runs/start-execution';
import type { WorkerMetrics } from '../runtime/metrics/worker-metrics';
import { createDataConverter } from './codec/data-converter';

export interface RunStartDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** The connection the worker polls with: eager start hands the workflow task to a worker on the same one. */
  connection: NativeConnection;
  metrics: WorkerMetrics;
}

/** An HTTP answer in the API's envelope. */
export interface RunStartAnswer {
  status: number;
  body: { data: { temporal_run_id: string; eagerly_started: boolean } | null; error: string | null };
}

export type StartRecordedRun = (runId: string) => Promise<RunStartAnswer>;

export function createRunStarter(deps: RunStartDeps): StartRecordedRun {
  const client = new Client({
    connection: deps.connection,
    namespace: deps.config.TEMPORAL_NAMESPACE,
    dataConverter: createDataConverter(deps.config.PAYLOAD_CODEC_KEYS),
  });
  const refuse = (status: number, error: string): RunStartAnswer => ({ status, body: { data: null, error } });
  return async function startRecordedRun(runId) {
    if (!isId('run', runId)) return refuse(404, 'no such run');
    const doc = await runsCollection(deps.db).findOne({ _id: runId });
    if (!doc) return refuse(404, 'no such run');
    if (doc.status !== 'queued' || doc.temporal.run_id !== null) return refuse(409, 'the run is not waiting to start');
    try {
      const started = await startRunExecution(client, doc, loadedSnapshot(doc), { eager: true });
      deps.metrics.runStartTaken(started.eagerlyStarted);
      return {
        status: 200,
        body: {
          data: { temporal_run_id: started.temporalRunId, eagerly_started: started.eagerlyStarted },
          error: null,
        },
      };
    } catch (err) {
      // The API starts the run itself next, and answers for Temporal's refusal or absence as it always does.
      deps.logger.warn({ run_id: runId, err }, 'could not start a handed-off run');
      return refuse(503, 'could not start the run');
    }
  };
}
