/**
 * Custom search attributes set on every run, so the Temporal Web UI can list runs by Stepwise workflow, its name and
 * owner (e.g. `StepwiseWorkflowId = "wf_…"`, `StepwiseWorkflowName = "Order total"`). Keyword, not Text: the UI's
 * filter matches a name exactly (and `STARTS_WITH`), as a user types the name they gave. The dev server registers them at start; the API registers them on boot
 * against any other server (see shared/temporal-client.ts).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  StepwiseWorkflowId: 'Keyword',
  StepwiseOwnerId: 'Keyword',
  StepwiseWorkflowName: 'Keyword',
} as const;

export const workflowIdKey = defineSearchAttributeKey('StepwiseWorkflowId', SearchAttributeType.KEYWORD);
export const ownerIdKey = defineSearchAttributeKey('StepwiseOwnerId', SearchAttributeType.KEYWORD);
export const workflowNameKey = defineSearchAttributeKey('StepwiseWorkflowName', SearchAttributeType.KEYWORD);
