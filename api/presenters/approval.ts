/** Waiting approval → an item of the approvals inbox (GET /api/v1/approvals). */
import { z } from 'zod';
import type { ApprovalDoc } from '../../db/approvals';
import { iso, isoOrNull, isoTimestamp } from './common';

export const approvalView = z
  .strictObject({
    run_id: z.string(),
    workflow_id: z.string(),
    workflow_name: z.string(),
    step_id: z.string().meta({
      description: 'The execution to decide: the step id, or `step[i]` / `step#n` inside a map or loop.',
    }),
    message: z.string(),
    instructions: z.string().nullable(),
    waiting_since: isoTimestamp,
    deadline: isoTimestamp.nullable().meta({ description: 'When the approval times out (null: it waits forever).' }),
    approve_url: z.string().meta({ description: 'POST `{step_id, approved, comment?}` here to decide.' }),
  })
  .meta({ id: 'Approval' });

export type ApprovalView = z.infer<typeof approvalView>;

export function presentApproval(doc: ApprovalDoc, baseUrl: string): ApprovalView {
  return {
    run_id: doc.run_id,
    workflow_id: doc.workflow_id,
    workflow_name: doc.workflow_name,
    step_id: doc.step_id,
    message: doc.message,
    instructions: doc.instructions,
    waiting_since: iso(doc.created_at),
    deadline: isoOrNull(doc.deadline),
    approve_url: `${baseUrl.replace(/\/+$/, '')}/api/v1/workflows/runs/${doc.run_id}/approve`,
  };
}
