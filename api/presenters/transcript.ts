/** The transcript view of an agent step: its setup, the conversation entries in order, usage and final answer. */
import { z } from 'zod';
import type { RunStepDoc } from '../../db/runs';
import type { TranscriptDoc } from '../../db/transcripts';
import { DEFAULT_EGRESS } from '../../domain/egress';
import { isoTimestamp } from './common';

const estimated = z.literal(true).optional().meta({
  description: 'Present when the tokens are estimates: the provider reported no usage (docs/runs.md, "Token usage").',
});
const usageView = z.strictObject({ input_tokens: z.number().int(), output_tokens: z.number().int(), estimated });
const toolCallView = z.strictObject({
  id: z.string(),
  name: z.string(),
  args: z.unknown(),
  invalid_args: z.string().optional().meta({ description: 'The raw arguments text when it was not valid JSON.' }),
});

export const transcriptEntryView = z.discriminatedUnion('role', [
  z.strictObject({
    seq: z.number().int(),
    role: z.literal('user'),
    text: z.string(),
    repair: z.boolean().meta({ description: 'A repair request after an answer that did not fit output_schema.' }),
    at: isoTimestamp,
  }),
  z.strictObject({
    seq: z.number().int(),
    role: z.literal('assistant'),
    turn: z.number().int(),
    text: z.string().nullable(),
    tool_calls: z.array(toolCallView),
    usage: usageView,
    finish_reason: z.string(),
    final: z.boolean(),
    at: isoTimestamp,
  }),
  z.strictObject({
    seq: z.number().int(),
    role: z.literal('tool'),
    turn: z.number().int(),
    call_id: z.string(),
    name: z.string(),
    args: z.unknown(),
    result: z.unknown(),
    is_error: z.boolean(),
    error_code: z.string().nullable().meta({
      description: "Why the call failed or was refused; `egress_denied`: outside the step's egress policy.",
    }),
    truncated: z.boolean(),
    replayed_from_run_id: z.string().nullable().meta({
      description:
        'Set when the call was answered from this recorded run (a replayed experiment item): no live call was made.',
    }),
    at: isoTimestamp,
  }),
]);

export const transcriptView = z.strictObject({
  run_id: z.string(),
  step_id: z.string(),
  status: z.string(),
  model: z.string().nullable(),
  tools: z.array(z.string()),
  mcp_tools: z
    .array(
      z.strictObject({
        name: z.string().meta({ description: 'As the model saw it: `<server name>__<tool>`.' }),
        server_id: z.string(),
        tool: z.string().meta({ description: 'The tool’s name on its server.' }),
        description: z.string(),
        retry: z
          .enum(['retry', 'once'])
          .meta({ description: '`retry`: read-only or idempotent; `once`: never repeated.' }),
        refused: z.boolean().meta({ description: 'Destructive and not in allow_destructive: every call refused.' }),
      }),
    )
    .optional()
    .meta({
      description: 'Steps with mcp_tools: the MCP tools the model was shown (listed once, before its first call).',
    }),
  mcp_problems: z
    .array(z.string())
    .optional()
    .meta({ description: 'Why some selected MCP tools were not shown (a server that could not be listed, a bound).' }),
  egress: z
    .strictObject({ email_recipients: z.array(z.string()), http_hosts: z.array(z.string()).nullable() })
    .nullable()
    .meta({ description: 'The egress policy the step ran with (null before its first model call).' }),
  system_prompt: z
    .string()
    .nullable()
    .meta({ description: 'As sent: the prompt, the numbered tasks and the answer format.' }),
  output_schema: z.record(z.string(), z.unknown()).nullable(),
  max_turns: z.number().int().nullable(),
  turns: z.number().int().nullable(),
  usage: z.strictObject({
    llm_calls: z.number().int(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    estimated,
  }),
  final_answer: z.string().nullable(),
  entries: z.array(transcriptEntryView),
});

export type TranscriptView = z.infer<typeof transcriptView>;
type EntryView = z.infer<typeof transcriptEntryView>;

function presentEntry(doc: TranscriptDoc): EntryView | null {
  const at = doc.written_at.toISOString();
  switch (doc.kind) {
    case 'setup':
      return null;
    case 'user':
      return { seq: doc.seq, role: 'user', text: doc.text, repair: doc.repair, at };
    case 'assistant':
      return {
        seq: doc.seq,
        role: 'assistant',
        turn: doc.turn,
        text: doc.text,
        tool_calls: doc.tool_calls.map((c) => ({
          id: c.id,
          name: c.name,
          args: c.args,
          ...(c.invalid_args !== undefined ? { invalid_args: c.invalid_args } : {}),
        })),
        usage: doc.usage,
        finish_reason: doc.finish_reason,
        final: doc.final,
        at,
      };
    case 'tool':
      return {
        seq: doc.seq,
        role: 'tool',
        turn: doc.turn,
        call_id: doc.call_id,
        name: doc.name,
        args: doc.args,
        result: doc.output,
        is_error: doc.is_error,
        error_code: doc.error_code ?? null,
        truncated: doc.truncated,
        replayed_from_run_id: doc.replayed_from_run_id ?? null,
        at,
      };
  }
}

export function presentTranscript(args: {
  runId: string;
  step: RunStepDoc;
  setup: TranscriptDoc | null;
  final: TranscriptDoc | null;
  entries: TranscriptDoc[];
}): TranscriptView {
  const setup = args.setup?.kind === 'setup' ? args.setup : null;
  return {
    run_id: args.runId,
    step_id: args.step.id,
    status: args.step.status,
    model: setup?.model ?? null,
    tools: setup?.tools ?? [],
    ...(setup?.mcp_tools
      ? {
          mcp_tools: setup.mcp_tools.map((t) => ({
            name: t.name,
            server_id: t.server_id,
            tool: t.tool,
            description: t.description,
            retry: t.retry,
            refused: t.refused,
          })),
        }
      : {}),
    ...(setup?.mcp_problems?.length ? { mcp_problems: setup.mcp_problems } : {}),
    egress: setup ? (setup.egress ?? DEFAULT_EGRESS) : null,
    system_prompt: setup?.system ?? null,
    output_schema: setup?.output_schema ?? null,
    max_turns: setup?.max_turns ?? null,
    turns: args.step.turns,
    usage: args.step.usage,
    final_answer: args.final?.kind === 'assistant' ? args.final.text : null,
    entries: args.entries.map(presentEntry).filter((e): e is EntryView => e !== null),
  };
}
