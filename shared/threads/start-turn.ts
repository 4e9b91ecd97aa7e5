/**
 * Starts a thread's turn as a run, the one way runs are created (../runs/create-run.ts): the caller's run-start
 * quota, the snapshot's limit, the record (with the thread and turn on it), the concurrent-runs limit and Temporal's
 * start. The run id was fixed when the message was accepted, so a repeated start (a retried request, the worker
 * starting a queued turn again) finds the first. Used by the API (a message that starts at once) and the worker (the
 * next queued message, when a turn ends).
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import type { ThreadDoc } from '../../db/threads';
import { createRun, type CreatedRun } from '../runs/create-run';
import { startExecution } from '../runs/start-execution';
import { buildTurnSnapshot } from './turn-snapshot';

export interface TurnStartDeps {
  db: Db;
  config: Config;
  temporal: Client;
}

export async function startTurnRun(
  deps: TurnStartDeps,
  thread: ThreadDoc,
  turn: number,
  runId: string,
  opts: {
    charge?: (() => Promise<void>) | undefined;
    /** Temporal's start (the API turns an unreachable Temporal into its 503); startExecution when absent. */
    start?: (doc: CreatedRun['doc'], snapshot: CreatedRun['doc']['snapshot']) => Promise<void>;
  } = {},
): Promise<CreatedRun> {
  return createRun(deps, {
    ownerId: thread.owner_id,
    runId,
    charge: opts.charge,
    prepare: async (id, now) => ({
      snapshot: await buildTurnSnapshot(deps, thread, turn, id, now),
      adjust: (doc) => ({ ...doc, thread_id: thread._id, thread_turn: turn }),
    }),
    onRefused: 'remove',
    start: opts.start ?? ((doc, snapshot) => startExecution(deps, doc, snapshot)),
  });
}
