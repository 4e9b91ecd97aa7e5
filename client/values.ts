/**
 * The few values the clients need at run time that the generated types only describe (client/schema.d.ts holds types,
 * no values). Each list is spelled as a record over the generated type, so the compiler refuses a value the document
 * does not have and a value missing from it: the list follows the document, which follows the server's schema.
 * Types only from ./schema: the console imports this file into its bundle.
 */
import type { components } from './schema';

export type RunStatus = components['schemas']['RunStatus']['status'];

const runStatuses: Record<RunStatus, true> = {
  queued: true,
  running: true,
  waiting: true,
  completed: true,
  failed: true,
  cancelled: true,
  timed_out: true,
};

/** Every run status, in the document's order of a run's life. */
export const RUN_STATUSES = Object.keys(runStatuses) as RunStatus[];

const inFlight: Record<Exclude<RunStatus, 'completed' | 'failed' | 'cancelled' | 'timed_out'>, true> = {
  queued: true,
  running: true,
  waiting: true,
};

/** The statuses a run may still leave: lists and pages keep refreshing while one is shown. */
export const ACTIVE_RUN_STATUSES = Object.keys(inFlight) as RunStatus[];

export type RunEventType = components['schemas']['RunEvent']['type'];

const runEventTypes: Record<RunEventType, true> = {
  'step.started': true,
  'step.retrying': true,
  'step.waiting': true,
  'step.resumed': true,
  'step.completed': true,
  'step.failed': true,
  'step.skipped': true,
  'step.child_run': true,
  'step.warning': true,
  'agent.model_call': true,
  'agent.tool_call': true,
  'agent.text.delta': true,
  'agent.text.void': true,
  'run.ended': true,
};

/** Every event type of a run's event stream (a client meets a newer type as one outside this list). */
export const RUN_EVENT_TYPES = Object.keys(runEventTypes) as RunEventType[];
