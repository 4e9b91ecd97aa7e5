/** `approval`: the run goes to `waiting` until a human approves or rejects the step through the API (no activity). */
import { z } from 'zod';
import type { ActionDefinition } from './types';

const config = z.strictObject({
  message: z.string().min(1).max(4000).describe('What the approver is asked to decide'),
  instructions: z.string().max(16_000).optional().describe('Longer guidance shown to the approver'),
  timeout_seconds: z
    .number()
    .int()
    .positive()
    .max(30 * 24 * 3600)
    .optional()
    .describe('Fail the step when nobody decides within this time (default: wait indefinitely)'),
});

const output = z.object({
  approved: z.boolean(),
  comment: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: z.string(),
});

export const approvalAction = {
  name: 'approval',
  description:
    'Wait for a human decision: the run shows status `waiting` until POST /api/v1/workflows/runs/:runId/approve ' +
    'approves (the run continues) or rejects (the run fails with the comment).',
  config,
  output,
} satisfies ActionDefinition<'approval', typeof config, typeof output>;
