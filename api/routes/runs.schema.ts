/** Query schema of the run search (GET /api/v1/runs). */
import { z } from 'zod';
import { RUN_STATUSES } from '../../db/run-view/view';
import { pageQuery } from '../pagination';

/** `status=a,b` and/or `status=a&status=b`. */
const statusList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((s) => s.trim()))
  .pipe(
    z
      .array(z.enum(RUN_STATUSES))
      .min(1)
      .max(RUN_STATUSES.length * 2),
  );

const instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export const runSearchQuery = pageQuery.extend({
  status: statusList.optional().meta({
    description: `One or more of ${RUN_STATUSES.join(', ')}, comma-separated or repeated (\`status=failed,timed_out\`).`,
  }),
  workflow_id: z.string().min(1).max(100).optional(),
  schedule_id: z.string().min(1).max(100).optional().meta({ description: 'Runs this schedule started.' }),
  created_after: instant.optional().meta({ description: 'Runs created at or after this ISO-8601 time.' }),
  created_before: instant.optional().meta({ description: 'Runs created before this ISO-8601 time.' }),
  q: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .meta({ description: 'Text the workflow name contains (case-insensitive), as it was when the run started.' }),
});
