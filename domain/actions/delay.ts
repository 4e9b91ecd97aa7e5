/** `delay`: a durable timer in the workflow (no activity). Exactly one of `seconds` or `until`. */
import { z } from 'zod';
import { delayConfig, delayRule } from '../builtin-actions';
import type { ActionDeclaration } from './types';

const output = z.object({
  /** When the timer was due (ISO 8601). */
  until: z.string(),
  /** Seconds actually waited (0 when `until` was already past). */
  waited_seconds: z.number(),
});

export const delayDeclaration = {
  name: 'delay',
  effect: 'workflow',
  description: 'Pause the run durably for `seconds`, or until an ISO 8601 instant `until` (at most 30 days).',
  // The schema and rule the workflow parses the rendered config with (temporal/workflows/builtin-steps.ts).
  config: delayConfig,
  refine: delayRule,
  output,
  template: {
    name: 'Wait',
    short_description: 'Pauses the run durably for a while.',
    default_prompt: 'Wait before the next step (seconds, or until an ISO 8601 instant).',
    tags: ['timing'],
    config: { seconds: 60 },
  },
} satisfies ActionDeclaration<'delay', typeof delayConfig, typeof output>;
