/** Query schema of the usage view (GET /api/v1/usage). */
import { z } from 'zod';
import { USAGE_DIMENSIONS } from '../../domain/usage';

/** A UTC calendar day, `YYYY-MM-DD` (the pattern knows month lengths and leap years, so the document states it). */
const day = z.iso.date();

const DIMENSION = `(?:${USAGE_DIMENSIONS.join('|')})`;
/** One `group_by=` value: dimensions separated by commas (no spaces). */
const groupValue = z
  .string()
  .regex(
    new RegExp(`^${DIMENSION}(?:,${DIMENSION}){0,${USAGE_DIMENSIONS.length - 1}}$`),
    `must be one or more of ${USAGE_DIMENSIONS.join(', ')}, comma-separated`,
  );

/** `group_by=day,model` and/or `group_by=day&group_by=model`. */
const groupList = z
  .union([groupValue, z.array(groupValue).min(1).max(USAGE_DIMENSIONS.length)])
  .transform(
    (v) =>
      [...new Set((Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')))] as (typeof USAGE_DIMENSIONS)[number][],
  );

/** Dates default in the handler (they depend on today; the parsed empty query is shared between requests). */
export const usageQuery = z.strictObject({
  from: day.optional().meta({ description: 'First UTC day, included (default: 29 days before `to`).' }),
  to: day.optional().meta({ description: 'Last UTC day, included (default: today).' }),
  group_by: groupList.optional().meta({
    description:
      `One or more of ${USAGE_DIMENSIONS.join(', ')}, comma-separated or repeated (default: day). Each row is one ` +
      'group; `thread` covers the last 8 days.',
  }),
});
