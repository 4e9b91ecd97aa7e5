/** Run event → the `data:` JSON of one Server-Sent Event (docs/runs.md "Following a run" lists the types). */
import { z } from 'zod';
import type { LoggedRunEvent, RUN_EVENT_TYPES } from '../../db/run-events';
import { runStatusSchema } from '../../domain/run-status';
import { isoTimestamp } from './common';

const common = {
  seq: z
    .number()
    .int()
    .meta({ description: 'The event id (also the SSE `id:`): increasing from 1 (a number may be skipped).' }),
  run_id: z.string(),
  at: isoTimestamp,
};
const stepCommon = {
  ...common,
  exec_id: z.string().meta({ description: '`step`, `step[i]` (map item) or `step#n` (loop iteration).' }),
  step_id: z.string(),
};
const stepError = z.looseObject({ reason: z.string(), message: z.string() });
const waitedToolCall = z
  .looseObject({
    transcript_seq: z.number().int().meta({ description: "The model answer's entry (its agent.model_call's)." }),
    index: z.number().int().meta({ description: "The call among that answer's tool calls, from 0." }),
    name: z.string().meta({ description: 'The tool as the model called it (`<server>__<tool>`).' }),
  })
  .meta({ description: 'A tool call of an agent step that waits for the owner (a destructive MCP tool).' });
const estimated = z
  .literal(true)
  .optional()
  .meta({ description: 'Present when the tokens are estimates: the provider reported no usage.' });
const tokens = z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int(), estimated });

// Loose objects: the clients read these fields, and an event may carry more (a field added later breaks no client).
// One member per RUN_EVENT_TYPES value (checked below).
const members = [
  z.looseObject({ ...stepCommon, type: z.literal('step.started'), attempt: z.number().int() }),
  z.looseObject({ ...stepCommon, type: z.literal('step.retrying'), attempt: z.number().int(), error: stepError }),
  z
    .looseObject({
      ...stepCommon,
      type: z.literal('step.waiting'),
      tool_call: waitedToolCall
        .optional()
        .meta({ description: 'An agent step: the tool call it waits for (absent for an approval step).' }),
    })
    .meta({ description: 'The execution waits for a decision: an approval step once, an agent step once per call.' }),
  z
    .looseObject({
      ...stepCommon,
      type: z.literal('step.resumed'),
      tool_call: waitedToolCall,
      approved: z.boolean().meta({ description: 'The decision: approved, the call is made; rejected, it is not.' }),
    })
    .meta({ description: 'An agent step decided on: it runs again (the answer goes to its model).' }),
  z.looseObject({
    ...stepCommon,
    type: z.literal('step.completed'),
    output: z.unknown().optional(),
    output_ref: z
      .looseObject({ bytes: z.number().int() })
      .optional()
      .meta({ description: 'Instead of `output` when the output is stored by reference (over 64 KiB).' }),
    usage: tokens.optional(),
    reused_from_run_id: z.string().optional(),
  }),
  z.looseObject({ ...stepCommon, type: z.literal('step.failed'), error: stepError }),
  z.looseObject({ ...stepCommon, type: z.literal('step.skipped'), reason: z.string() }),
  z.looseObject({ ...stepCommon, type: z.literal('step.child_run'), child_run_id: z.string() }),
  z
    .looseObject({
      ...stepCommon,
      type: z.literal('step.warning'),
      source: z.string().meta({ description: '`mcp_tools`: MCP tools left out of what the model is shown.' }),
      problems: z.array(z.string()).meta({
        description:
          "What went wrong, one line each, as the step transcript's `mcp_problems` (a refused or unreachable " +
          'server, a tool over a bound); a refused private address names the setting that allows it.',
      }),
    })
    .meta({ description: 'The execution goes on without something it was given: logged once per execution.' }),
  z.looseObject({
    ...stepCommon,
    type: z.literal('agent.model_call'),
    turn: z.number().int(),
    usage: tokens,
    tool_calls: z.number().int(),
  }),
  z.looseObject({
    ...stepCommon,
    type: z.literal('agent.tool_call'),
    turn: z.number().int(),
    tool: z.string(),
    ok: z.boolean(),
    summary: z.string(),
  }),
  z
    .looseObject({
      ...stepCommon,
      type: z.literal('agent.text.delta'),
      turn: z.number().int().meta({ description: 'The model call of this execution (as in its agent.model_call).' }),
      attempt: z.number().int().meta({ description: 'The attempt of that call (from 1) that generated the text.' }),
      text: z.string().meta({ description: 'The characters generated since the last delta of this call.' }),
    })
    .meta({
      description:
        'Live text: append `text` to the text of (exec_id, turn); a higher `attempt` than that text has starts it ' +
        'over, a lower one is dropped (docs/runs.md "Live text"). Kept STREAM_DELTAS_RETENTION_HOURS; the ' +
        "transcript holds the final text, which replaces the live one when the turn's agent.model_call arrives.",
    }),
  z
    .looseObject({
      ...stepCommon,
      type: z.literal('agent.text.void'),
      turn: z.number().int(),
      attempt: z.number().int().meta({ description: 'The new attempt, whose deltas follow.' }),
    })
    .meta({ description: 'A retried model call: discard the live text of (exec_id, turn) so far.' }),
  z.looseObject({
    ...common,
    type: z.literal('run.ended'),
    status: runStatusSchema,
    error: z.looseObject({ message: z.string().optional(), step_id: z.string().nullable().optional() }).nullable(),
    usage: z
      .looseObject({
        llm_calls: z.number().int().optional(),
        input_tokens: z.number().int().optional(),
        output_tokens: z.number().int().optional(),
        estimated,
      })
      .optional(),
    steps: z.array(z.looseObject({ id: z.string(), status: z.string() })),
  }),
] as const;

export const runEventView = z.discriminatedUnion('type', members).meta({
  id: 'RunEvent',
  description:
    'One event, by `type`; `run.ended` is the last. agent.model_call also carries {final, transcript_seq} and ' +
    'agent.tool_call {transcript_seq} (the entry in the step transcript).',
});

export type RunEventView = z.infer<typeof runEventView>;

// Every logged type has its member: a type added to RUN_EVENT_TYPES without one fails to compile here.
const everyTypeHasAMember: [Exclude<(typeof RUN_EVENT_TYPES)[number], RunEventView['type']>] extends [never]
  ? true
  : never = true;
void everyTypeHasAMember;

export function presentRunEvent(doc: LoggedRunEvent): RunEventView {
  const data = JSON.parse(doc.data_json) as Record<string, unknown>;
  // The writer (db/run-events.ts) stores each type's fields; the envelope fields are the document's own.
  return { ...data, seq: doc.seq, type: doc.type, run_id: doc.run_id, at: doc.at.toISOString() } as RunEventView;
}
