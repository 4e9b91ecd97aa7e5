/** Request schemas of threads (docs/threads.md): the thread, its messages, its event stream, a fork. */
import { z } from 'zod';
import { MODEL_REF_MESSAGE, MODEL_REF_PATTERN } from '../../domain/agent';
import { MAX_THREAD_MESSAGE_BYTES } from '../../domain/thread';
import { pageQuery } from '../http/pagination';
import { queryInteger } from '../http/query-integer';
import { LIMITS, toolNames } from './agents';
import { jsonDataObject } from './json';
import { mcpToolSelections } from './mcp-tools';

export const threadIdParams = z.strictObject({ id: z.string().min(1) });

export const turnParams = z.strictObject({
  id: z.string().min(1),
  turn: queryInteger({ min: 1, max: 999_999_999 }).meta({ description: 'The turn number (1 is the first).' }),
});

/** A message's id within its thread, `m<turn>.<pos>` (an approval's `m<turn>.<pos>a<call>`; domain/thread.ts). */
export const messageIdString = z
  .string()
  .regex(
    /^m[1-9][0-9]{0,8}\.(?:0|[1-9][0-9]{0,5})(?:a(?:0|[1-9][0-9]{0,2}))?$/,
    'a message id of the thread (`m<turn>.<pos>`, an approval’s `m<turn>.<pos>a<call>`)',
  )
  .meta({ example: 'm3.0' });

const METADATA_KEY = /^[A-Za-z0-9_-]{1,64}$/;
const metadata = z
  .record(
    z.string().regex(METADATA_KEY, 'letters, digits, "_" or "-", 1–64'),
    z.union([z.string().max(500), z.number(), z.boolean()]),
  )
  .refine((m) => Object.keys(m).length <= 20, 'at most 20 keys')
  .meta({ maxProperties: 20, description: 'Flat key → string, number or boolean; lists filter on it.' });

const positive = z.number().int().min(1).max(1_000_000_000);

const threadBudget = z
  .strictObject({
    turn_max_tokens: positive
      .optional()
      .meta({ description: 'Tokens (input + output) of one turn; capped by RUN_MAX_TOKENS.' }),
    turn_max_model_calls: positive
      .optional()
      .meta({ description: 'Model calls of one turn; capped by RUN_MAX_MODEL_CALLS.' }),
    max_tokens: positive
      .optional()
      .meta({ description: 'Tokens of the whole thread: once used, every new message is refused (422).' }),
  })
  .meta({ id: 'ThreadBudget' });

export const messagePolicy = z.enum(['reject', 'enqueue']).meta({
  description:
    'A message sent while a turn runs: `reject` (409 naming the running turn, the default) or `enqueue` (it runs ' +
    'after the turns before it).',
});

const overrides = z
  .strictObject({
    model: z
      .string()
      .max(LIMITS.model)
      .regex(MODEL_REF_PATTERN, MODEL_REF_MESSAGE)
      .optional()
      .meta({ description: "`provider:model` instead of the template's." }),
    instructions: z
      .string()
      .min(1)
      .max(8_000)
      .optional()
      .meta({ description: "Added to the template's system prompt." }),
    tools: toolNames.optional().meta({ description: "Built-in tools instead of the template's." }),
    mcp_tools: mcpToolSelections.optional(),
    budget: threadBudget.optional(),
    policy: messagePolicy.optional(),
  })
  .meta({ id: 'ThreadOverrides' });

export const createThreadBody = z.strictObject({
  template: z
    .string()
    .min(1)
    .max(200)
    .meta({ description: 'The agent template: its id (`tpl_…`) or its name.', example: 'support-agent' }),
  title: z.string().min(1).max(200).nullable().optional(),
  metadata: metadata.optional(),
  overrides: overrides.optional(),
});

export const updateThreadBody = z
  .strictObject({
    title: z.string().min(1).max(200).nullable().optional(),
    metadata: metadata.optional().meta({ description: 'Replaces the whole metadata.' }),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field is required' })
  .meta({ minProperties: 1 });

const metadataFilter = z
  .string()
  .max(64 + 1 + 500)
  // The key and its colon; the value is any text up to 500 characters. No `.` in the pattern: regex dialects disagree
  // on which characters it matches (`\r`), so a client generating from the document would send what the server refuses.
  .regex(/^[A-Za-z0-9_-]{1,64}:/, '`key:value`')
  .meta({ description: '`key:value`: threads whose metadata has this string value (repeat for several).' });

export const listThreadsQuery = pageQuery.extend({
  template_id: z.string().min(1).max(100).optional(),
  metadata: z
    .union([metadataFilter, z.array(metadataFilter).min(1).max(20)])
    .optional()
    .transform((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v])),
  q: z.string().min(1).max(100).optional().meta({ description: 'Text the title contains (case-insensitive).' }),
});

export const postMessageBody = z.strictObject({
  text: z
    .string()
    .min(1)
    .max(MAX_THREAD_MESSAGE_BYTES)
    .refine((t) => t.trim().length > 0, 'must not be blank')
    .meta({
      description: `The user's message; at most ${MAX_THREAD_MESSAGE_BYTES} UTF-8 bytes (413 \`message_too_large\`).`,
    }),
  after: messageIdString
    .optional()
    .meta({ description: 'The last message you saw: refused (409 `stale_after`) when the thread has moved on.' }),
  policy: messagePolicy.optional().meta({ description: "This message's policy instead of the thread's." }),
});

export const postMessageQuery = z.strictObject({
  wait: queryInteger({ min: 0, max: 60 })
    .optional()
    .meta({ description: "Wait up to this many seconds for the turn's reply (200 with it when it came)." }),
});

export const forkThreadBody = z.strictObject({
  at: messageIdString.meta({ description: 'The last message the new thread keeps.' }),
  title: z.string().min(1).max(200).nullable().optional(),
});

/** `Last-Event-ID` of a thread's stream: `<turn>.<seq>` (after event `seq` of turn `turn`; `0.0`: from the start). */
export const threadEventId = z
  .string()
  .regex(/^(?:0|[1-9][0-9]{0,8})\.(?:0|[1-9][0-9]{0,14})$/, '`<turn>.<seq>`')
  .transform((s) => {
    const [turn, seq] = s.split('.').map(Number);
    return { turn: turn ?? 0, seq: seq ?? 0 };
  });

export const threadEventsQuery = z.strictObject({
  after: threadEventId.optional().meta({ description: 'Resume after this event id (as `Last-Event-ID`).' }),
  until: z.enum(['idle']).optional().meta({
    description:
      '`idle`: end the stream once the events of every turn accepted so far were sent (default: wait for more).',
  }),
});

/** PUT /api/v1/threads/:id/memory: the whole new memory (it must fit the template's `memory_schema`). */
export const putMemoryBody = z
  .strictObject({
    memory: jsonDataObject.meta({ description: "The new working memory; it must fit the thread's memory schema." }),
  })
  .meta({ id: 'PutThreadMemory' });
