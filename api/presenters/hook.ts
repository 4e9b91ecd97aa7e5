/** Hook → JSON. The secret appears only in the answers that create or rotate it. */
import { z } from 'zod';
import type { HookDoc } from '../../db/hooks';
import { iso, isoTimestamp } from './common';

export const hookView = z
  .strictObject({
    id: z.string(),
    workflow_id: z.string(),
    name: z.string().nullable(),
    url: z.string().meta({ description: 'POST the run input (a JSON object) here; no API key.' }),
    signed: z.boolean(),
    enabled: z.boolean(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
    secret: z
      .string()
      .optional()
      .meta({ description: 'Only when created or rotated: keep it, it is not shown again.' }),
  })
  .meta({ id: 'Hook' });

export type HookView = z.infer<typeof hookView>;

export function presentHook(doc: HookDoc, baseUrl: string, opts: { withSecret?: boolean } = {}): HookView {
  return {
    id: doc._id,
    workflow_id: doc.workflow_id,
    name: doc.name,
    url: `${baseUrl.replace(/\/+$/, '')}/api/v1/hooks/${doc._id}`,
    signed: doc.secret !== null,
    enabled: doc.enabled,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
    ...(opts.withSecret && doc.secret ? { secret: doc.secret } : {}),
  };
}
