/** Request schemas of inbound webhooks (hooks). */
import { z } from 'zod';

export const hookIdParams = z.strictObject({ hookId: z.string().min(1) });
export const workflowHookParams = z.strictObject({ id: z.string().min(1), hookId: z.string().min(1) });
export const workflowHooksParams = z.strictObject({ id: z.string().min(1) });

export const createHookBody = z.strictObject({
  name: z.string().min(1).max(100).optional(),
  signed: z
    .boolean()
    .optional()
    .meta({ description: 'Require Standard Webhooks signatures with the hook’s own secret (default true).' }),
});

export const updateHookBody = z
  .strictObject({
    name: z.string().min(1).max(100).nullable().optional(),
    enabled: z.boolean().optional().meta({ description: 'A disabled hook answers 404, like an unknown one.' }),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field is required' })
  // The refinement above, as the document states it (the body is required).
  .meta({ minProperties: 1 });
