/** The views of threads and their messages (docs/threads.md), with the schemas the OpenAPI document states. */
import { z } from 'zod';
import type { MemoryVersionDoc } from '../../db/thread-memory';
import type { ThreadDoc } from '../../db/threads';
import { publicMessageId, type ThreadMessageDoc } from '../../db/thread-messages';
import { RUN_STATUSES } from '../../domain/run-status';
import { iso, isoTimestamp, jsonObjectView } from './common';

const usageView = z.strictObject({
  llm_calls: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  estimated: z.literal(true).optional(),
});

const errorView = z.strictObject({
  step_id: z.string().nullable(),
  reason: z.string().meta({ description: 'E.g. `budget_exceeded`, `cancelled`, `not_started`.' }),
  message: z.string(),
  code: z.string().optional(),
});

export const threadView = z
  .strictObject({
    id: z.string().meta({ example: 'thr_x1Y2z3A4b5C6d7E8' }),
    template_id: z.string(),
    template_name: z.string(),
    title: z.string().nullable(),
    metadata: jsonObjectView,
    overrides: jsonObjectView.meta({ description: 'What the thread changes of its template (as created).' }),
    turns: z.number().int().meta({ description: 'Turns accepted so far (the last turn’s number).' }),
    message_count: z.number().int(),
    running_turn: z
      .strictObject({
        turn: z.number().int(),
        run_id: z.string(),
        step_id: z
          .string()
          .optional()
          .meta({ description: 'A turn a workflow’s agent step is taking: the step (its execution) in run `run_id`.' }),
      })
      .nullable()
      .meta({ description: 'The turn being answered, if any (its run is an ordinary run).' }),
    queued: z.number().int().meta({ description: 'Messages waiting for their turn (policy `enqueue`).' }),
    last_message_id: z.string().nullable().meta({ description: 'Send it as `after` with your next message.' }),
    usage: usageView.meta({ description: 'Model usage of the turns that ended, summed.' }),
    memory: jsonObjectView
      .nullable()
      .meta({ description: 'The working memory (null: the template has no `memory_schema`).' }),
    memory_version: z.number().int().nullable().meta({ description: 'Its version (0 as created; null: no memory).' }),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: 'Thread' });

export function presentThread(doc: ThreadDoc): z.infer<typeof threadView> {
  return {
    id: doc._id,
    template_id: doc.template_id,
    template_name: doc.template_name,
    title: doc.title,
    metadata: doc.metadata,
    overrides: { ...doc.overrides },
    turns: doc.turns,
    message_count: doc.message_count,
    running_turn: doc.running
      ? {
          turn: doc.running.turn,
          run_id: doc.running.run_id,
          ...(doc.running.step_id !== undefined ? { step_id: doc.running.step_id } : {}),
        }
      : null,
    queued: doc.queued,
    last_message_id: doc.last_message_id,
    usage: doc.usage,
    memory: doc.memory ?? null,
    memory_version: doc.memory_version ?? null,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
  };
}

export const threadMessageView = z
  .strictObject({
    id: z.string().meta({
      description:
        '`m<turn>.<pos>`; pos 0 is the turn’s user message. An approval: `m<turn>.<pos>a<call>`, the approval of ' +
        'call `<call>` of the assistant message `m<turn>.<pos>`.',
      example: 'm1.0',
    }),
    turn: z.number().int(),
    role: z.enum(['user', 'assistant', 'tool', 'summary', 'approval']).meta({
      description:
        '`summary`: a compaction’s summary of older turns (pos 1 of the turn that wrote it), given to later turns ' +
        'instead of them; the raw messages stay. `approval`: a tool call that waited for your decision, listed ' +
        'right after the assistant message that made it, from when it was asked.',
    }),
    text: z.string().nullable(),
    summary: z
      .strictObject({
        from_turn: z.number().int(),
        to_turn: z.number().int(),
        model: z.string(),
        usage: z.strictObject({
          input_tokens: z.number().int(),
          output_tokens: z.number().int(),
          estimated: z.literal(true).optional(),
        }),
        request: z.strictObject({ system: z.string(), prompt: z.string() }),
      })
      .optional()
      .meta({ description: 'Summary messages: the turns covered, and the compaction call (what it was sent).' }),
    tool_calls: z
      .array(z.strictObject({ id: z.string(), name: z.string(), args: z.unknown() }))
      .optional()
      .meta({ description: 'Assistant messages: the tool calls it made.' }),
    tool: z
      .strictObject({
        call_id: z.string(),
        name: z.string(),
        args: z.unknown(),
        output: z.unknown(),
        is_error: z.boolean(),
      })
      .optional()
      .meta({ description: 'Tool messages: the call and its result.' }),
    approval: z
      .strictObject({
        call_index: z.number().int().meta({ description: 'Which call of the assistant message it asks about.' }),
        call_id: z.string(),
        name: z.string().meta({ description: 'The tool as the model called it (an MCP tool: `<server>__<tool>`).' }),
        args: z.unknown(),
        status: z.enum(['requested', 'approved', 'rejected']).meta({
          description:
            '`requested` while it waits (and when the turn ended without a decision: see the user message’s ' +
            '`status`); then the decision.',
        }),
        decided_by: z.string().nullable().meta({ description: 'The deciding user’s id (null until decided).' }),
        decided_at: isoTimestamp.nullable().meta({ description: 'When the turn went on with the decision.' }),
        comment: z.string().nullable(),
      })
      .optional()
      .meta({ description: 'Approval messages: the call asked about and the decision.' }),
    final: z.literal(true).optional().meta({ description: 'The assistant message that answered the turn.' }),
    run_id: z.string().optional().meta({ description: 'User messages: the turn’s run (absent in a fork’s copies).' }),
    step_id: z
      .string()
      .optional()
      .meta({
        description:
          'User messages of a turn a workflow’s agent step took: the step (its execution) in run `run_id` whose input ' +
          'is the message and whose answer follows it.',
      }),
    status: z
      .enum(['queued', ...RUN_STATUSES])
      .optional()
      .meta({ description: 'User messages: the turn’s state (`queued` until it starts, then its run’s status).' }),
    error: errorView.nullable().optional(),
    usage: usageView.optional(),
    created_at: isoTimestamp,
  })
  .meta({ id: 'ThreadMessage' });

export function presentThreadMessage(doc: ThreadMessageDoc): z.infer<typeof threadMessageView> {
  return {
    id: publicMessageId(doc),
    turn: doc.turn,
    role: doc.role,
    text: doc.text,
    ...(doc.tool_calls ? { tool_calls: doc.tool_calls.map((c) => ({ id: c.id, name: c.name, args: c.args })) } : {}),
    ...(doc.tool ? { tool: doc.tool } : {}),
    ...(doc.summary ? { summary: doc.summary } : {}),
    ...(doc.approval
      ? {
          approval: {
            ...doc.approval,
            decided_at: doc.approval.decided_at ? iso(doc.approval.decided_at) : null,
          },
        }
      : {}),
    ...(doc.final ? { final: true as const } : {}),
    ...(doc.run_id !== undefined ? { run_id: doc.run_id } : {}),
    ...(doc.step_id !== undefined ? { step_id: doc.step_id } : {}),
    ...(doc.status !== undefined ? { status: doc.status } : {}),
    ...(doc.error !== undefined ? { error: doc.error } : {}),
    ...(doc.usage !== undefined ? { usage: doc.usage } : {}),
    created_at: iso(doc.created_at),
  };
}

export const acceptedMessageView = z
  .strictObject({
    thread_id: z.string(),
    message_id: z.string().meta({ example: 'm3.0' }),
    turn: z.number().int(),
    run_id: z.string().meta({ description: 'The turn’s run (its status and events as for any run).' }),
    status: z.enum(['queued', ...RUN_STATUSES]),
    reply: threadMessageView
      .nullable()
      .meta({ description: 'The assistant’s answer, once the turn completed (null before, and when it did not).' }),
  })
  .meta({ id: 'AcceptedMessage' });

export type AcceptedMessage = z.infer<typeof acceptedMessageView>;

export const threadMemoryView = z
  .strictObject({
    memory: jsonObjectView,
    version: z.number().int().meta({ description: '0 as created; each change (user or agent) is one more.' }),
    schema: jsonObjectView.meta({ description: 'The JSON Schema the memory must fit (the template’s).' }),
  })
  .meta({ id: 'ThreadMemory' });

export function presentThreadMemory(doc: ThreadDoc): z.infer<typeof threadMemoryView> {
  return { memory: doc.memory ?? {}, version: doc.memory_version ?? 0, schema: doc.memory_schema ?? {} };
}

export const memoryVersionView = z
  .strictObject({
    version: z.number().int(),
    memory: jsonObjectView,
    by: z.enum(['user', 'agent']).meta({ description: '`user` (PUT …/memory) or `agent` (the update_memory tool).' }),
    turn: z.number().int().nullable().meta({ description: 'The turn whose agent made the change (null: the user).' }),
    created_at: isoTimestamp,
  })
  .meta({ id: 'ThreadMemoryVersion' });

export function presentMemoryVersion(doc: MemoryVersionDoc): z.infer<typeof memoryVersionView> {
  return { version: doc.version, memory: doc.memory, by: doc.by, turn: doc.turn, created_at: iso(doc.created_at) };
}
