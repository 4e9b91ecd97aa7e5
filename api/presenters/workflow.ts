/** Workflow → JSON: `_id` becomes `id`, dates ISO strings; the owner stays inside (it is always the caller). */
import { z } from 'zod';
import type { WorkflowDoc } from '../../db/workflows';
import { workflowConfigBody, workflowStepBody } from '../schemas/workflows';
import { iso, isoTimestamp } from './common';

export const workflowView = z
  .strictObject({
    id: z.string().meta({ example: 'wf_x1Y2z3A4b5C6d7E8' }),
    name: z.string(),
    description: z.string().nullable(),
    steps: z.array(workflowStepBody),
    config: workflowConfigBody,
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: 'Workflow' });

export type WorkflowView = z.infer<typeof workflowView>;

export function presentWorkflow(doc: WorkflowDoc): WorkflowView {
  return {
    id: doc._id,
    name: doc.name,
    description: doc.description,
    steps: doc.steps,
    config: doc.config,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
  };
}
