/** Run → an item of the run search: the run list's fields plus the workflow name, usage and duration. */
import { z } from 'zod';
import type { RunDoc } from '../../db/runs';
import { sumUsage } from '../../domain/usage';
import { presentRunSummary, runSummaryView, runView } from '../../shared/run-view/view';

export const runSearchItemView = runSummaryView
  .extend({
    workflow_name: z.string(),
    usage: runView.shape.usage,
    duration_ms: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'From the first step start to the end; null until the run has started and ended.' }),
  })
  .meta({ id: 'RunSearchItem' });

export type RunSearchItemView = z.infer<typeof runSearchItemView>;

export function presentRunSearchItem(run: Omit<RunDoc, 'snapshot'>): RunSearchItemView {
  const usage = sumUsage(run.steps.map((s) => s.usage));
  const started = run.started_at ?? null;
  return {
    ...presentRunSummary(run),
    workflow_name: run.workflow_name,
    usage,
    duration_ms: started && run.completed_at ? run.completed_at.getTime() - started.getTime() : null,
  };
}
