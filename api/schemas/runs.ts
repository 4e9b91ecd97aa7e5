/** Query schema of the run search (GET /api/v1/runs). */
import { z } from 'zod';
import { RUN_STATUSES } from '../../domain/run-status';
import { pageQuery } from '../http/pagination';

const STATUS = `(?:${RUN_STATUSES.join('|')})`;
/** One `status=` value: run statuses separated by commas, each at most twice over (no spaces). */
const statusValue = z
  .string()
  .regex(
    new RegExp(`^${STATUS}(?:,${STATUS}){0,${RUN_STATUSES.length * 2 - 1}}$`),
    `must be one or more of ${RUN_STATUSES.join(', ')}, comma-separated`,
  );

/** `status=a,b` and/or `status=a&status=b`: the pattern is the whole rule, so the document states it. */
const statusList = z
  .union([statusValue, z.array(statusValue).min(1).max(RUN_STATUSES.length)])
  .transform(
    (v) => [...new Set((Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')))] as (typeof RUN_STATUSES)[number][],
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
