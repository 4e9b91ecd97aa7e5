/** `approval`: the run goes to `waiting` until a human approves or rejects the step through the API (no activity). */
import { z } from 'zod';
import { approvalConfig as config } from '../builtin-actions';
import type { ActionDeclaration } from './types';

const output = z.object({
  approved: z.boolean(),
  comment: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: z.string(),
});

export const approvalDeclaration = {
  name: 'approval',
  effect: 'workflow',
  description:
    'Wait for a human decision: the run shows status `waiting` until POST /api/v1/workflows/runs/:runId/approve ' +
    'approves (the run continues) or rejects (the run fails with the comment).',
  config,
  output,
  template: {
    name: 'Human approval',
    short_description: 'Waits until a person approves or rejects through the API.',
    default_prompt: 'Ask a person to approve before the run continues.',
    tags: ['human', 'approval'],
    config: { message: 'Approve to continue this run?' },
  },
} satisfies ActionDeclaration<'approval', typeof config, typeof output>;
