/**
 * A workflow's agent step that names a `thread` (decision 0603): `joinThread` takes the thread's next turn for the
 * step, its rendered input as the user message (shared/threads/step-turn.ts); `leaveThread` ends the turn with the
 * step's outcome, copying the step's transcript into the conversation (shared/threads/end-turn.ts). Both are
 * idempotent — a retried attempt finds the turn it took, a repeated end writes the same messages — so a worker lost
 * in between changes nothing. A refusal (unknown thread, another user's, being deleted, over its budget, an input too
 * large for a message) fails the step for good, with nothing written.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../../config';
import { resolveOutputRefs } from '../../../db/blobs';
import type { JsonValue } from '../../../domain/json';
import type { RunError, RunStatus, Usage } from '../../../domain/run';
import type { RunningTurn } from '../../../db/threads';
import type { ThreadRef } from '../../../domain/thread';
import { endAnswered } from '../../../shared/threads/end-turn';
import { joinThreadAsStep } from '../../../shared/threads/step-turn';
import { buildUserMessage } from '../../llm/prompt';

export interface JoinThreadInput {
  run_id: string;
  step_id: string;
  owner_id: string;
  thread_id: string;
  /** The step's rendered input (output references resolved here): the turn's user message. */
  input: JsonValue;
}

export type JoinThreadResult =
  { kind: 'joined'; thread: ThreadRef } | { kind: 'busy'; running: RunningTurn | null; queued: number };

export interface LeaveThreadInput {
  run_id: string;
  step_id: string;
  owner_id: string;
  thread: ThreadRef;
  status: RunStatus;
  error: RunError | null;
  usage: Usage;
}

/** What taking and ending a turn need: with a Temporal client, the thread's next queued message is started. */
const turnDeps = (deps: { config: Config; db: Db; logger: Logger; temporal?: Client }) => ({
  db: deps.db,
  config: deps.config,
  log: deps.logger,
  ...(deps.temporal ? { temporal: deps.temporal } : {}),
});

export function createThreadStepActivities(deps: { config: Config; db: Db; logger: Logger; temporal?: Client }) {
  return {
    async joinThread(req: JoinThreadInput): Promise<JoinThreadResult> {
      const text = buildUserMessage(await resolveOutputRefs(deps.db, req.run_id, req.input));
      const joined = await joinThreadAsStep(turnDeps(deps), {
        ownerId: req.owner_id,
        runId: req.run_id,
        stepId: req.step_id,
        threadId: req.thread_id,
        text,
      });
      if (joined.kind === 'refused') throw ApplicationFailure.nonRetryable(joined.message, joined.code);
      return joined;
    },

    async leaveThread(req: LeaveThreadInput): Promise<void> {
      await endAnswered(turnDeps(deps), {
        threadId: req.thread.id,
        ownerId: req.owner_id,
        turn: req.thread.turn,
        runId: req.run_id,
        stepId: req.step_id,
        state: { status: req.status, error: req.error, usage: req.usage },
      });
    },
  };
}
