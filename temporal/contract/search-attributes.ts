/**
 * Custom search attributes set on every run, so the Temporal Web UI can list runs by Stepwise workflow and owner
 * (e.g. `StepwiseWorkflowId = "wf_…"`). The dev server registers them at start; the API registers them on boot
 * against any other server (see temporal/client.ts).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  StepwiseWorkflowId: 'Keyword',
  StepwiseOwnerId: 'Keyword',
} as const;

export const workflowIdKey = defineSearchAttributeKey('StepwiseWorkflowId', SearchAttributeType.KEYWORD);
export const ownerIdKey = defineSearchAttributeKey('StepwiseOwnerId', SearchAttributeType.KEYWORD);
