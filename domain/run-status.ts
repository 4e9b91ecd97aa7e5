/**
 * Every status a run and a step show: the one list of each. The API's schemas use these enums, the OpenAPI document
 * publishes them, and the CLI and the console read them from the client generated from that document. Not for
 * workflow code (domain/run.ts has the types): zod's modules would run again in every execution.
 */
import { z } from 'zod';

export const runStatusSchema = z.enum([
  'queued',
  'running',
  'waiting',
  'completed',
  'failed',
  'cancelled',
  'timed_out',
]);
export type RunStatus = z.infer<typeof runStatusSchema>;
/** The run statuses in order, for messages and query patterns. */
export const RUN_STATUSES = runStatusSchema.options;

export const stepStatusSchema = z.enum(['pending', 'running', 'waiting', 'completed', 'failed', 'skipped']);
export type StepStatus = z.infer<typeof stepStatusSchema>;
