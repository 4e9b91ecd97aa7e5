/** The hand-written service's worker: its workflow and activities with Stepwise's data converter. */
import { Worker, type NativeConnection } from '@temporalio/worker';
import type { Db } from 'mongodb';
import type { CodecKey } from '../../domain/codec-keys';
import { createDataConverter } from '../../shared/codec/data-converter';
import type { LlmConfig } from '../../temporal/llm/provider';
import { createActivities } from './activities';

export function createHandWrittenWorker(opts: {
  connection: NativeConnection;
  db: Db;
  taskQueue: string;
  codecKeys: readonly CodecKey[];
  llm: LlmConfig;
}): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    taskQueue: opts.taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: createActivities(opts.db, opts.llm),
    dataConverter: createDataConverter(opts.codecKeys),
  });
}
