/** Request schemas of the agent-step transcript view. */
import { z } from 'zod';
import { pageLimit, pageQuery } from '../http/pagination';

export const transcriptParams = z.strictObject({
  runId: z.string().min(1).max(100),
  stepId: z.string().min(1).max(100),
});

/** Entries are paged like lists (`limit`, `cursor`, Link header), in conversation order. */
export const transcriptQuery = pageQuery.extend({
  limit: pageLimit(200),
});
