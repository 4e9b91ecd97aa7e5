/**
 * What a scorer reads (one item's run: its input, output, the item's expected value, the tool calls made, the usage
 * and the latency) and what it answers. The experiments workflow builds a sample from each item's run.
 */
import { z } from 'zod';
import { jsonValueSchema } from '../json-value';

export const toolCallSchema = z.object({
  name: z.string(),
  arguments: jsonValueSchema,
  result: jsonValueSchema.optional(),
});

export const sampleUsageSchema = z.object({
  input_tokens: z.number().min(0),
  output_tokens: z.number().min(0),
  llm_calls: z.number().min(0),
  /** Absent when no price table covers the models used. */
  cost: z.number().min(0).optional(),
});

export const scoringSampleSchema = z.object({
  input: jsonValueSchema,
  output: jsonValueSchema,
  /** Absent when the item has none: scorers that need one say so instead of scoring. */
  expected: jsonValueSchema.optional(),
  /** Every tool call of the run, in the order they were made. */
  trajectory: z.array(toolCallSchema),
  usage: sampleUsageSchema,
  latency_ms: z.number().min(0),
});

export type ToolCall = z.infer<typeof toolCallSchema>;
export type SampleUsage = z.infer<typeof sampleUsageSchema>;
export type ScoringSample = z.infer<typeof scoringSampleSchema>;

/** One scorer's verdict on one sample. `score` is in [0, 1]; `reason` is short and names what differed. */
export const scoreResultSchema = z.object({
  name: z.string(),
  score: z.number().min(0).max(1),
  pass: z.boolean(),
  reason: z.string(),
});

export type ScoreResult = z.infer<typeof scoreResultSchema>;
