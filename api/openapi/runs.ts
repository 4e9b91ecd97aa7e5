/** OpenAPI path of the run search. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, ok } from './kit';
import { runSearchItemView } from '../presenters/run-search';
import { runSearchQuery } from '../schemas/runs';

export const runsPaths: ZodOpenApiPathsObject = {
  '/api/v1/runs': {
    get: {
      tags: ['runs'],
      summary: 'Search your runs across all workflows, newest first',
      description:
        'Filters combine (AND): `status` (several at once; the status as the status endpoint shows it, `waiting` ' +
        'included), `workflow_id`, `created_after` (inclusive), `created_before`, `q` (text in the workflow name). ' +
        'Top-level runs only: a sub-workflow run is reached through its parent, a thread’s turn through its thread. Paged (`limit`, `cursor`, ' +
        '`Link: rel="next"`), one indexed query per page.',
      security: BEARER,
      requestParams: { query: runSearchQuery },
      responses: { ...ok(200, 'One page of runs', z.array(runSearchItemView), { paged: true }), ...errors(400, 401) },
    },
  },
};
