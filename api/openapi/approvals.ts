/** OpenAPI path of the approvals inbox. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, ok } from './kit';
import { approvalView } from '../presenters/approval';
import { pageQuery } from '../http/pagination';

export const approvalPaths: ZodOpenApiPathsObject = {
  '/api/v1/approvals': {
    get: {
      tags: ['runs'],
      summary: 'Your approvals inbox: approval steps waiting for your decision, across all your runs',
      description:
        'Approval steps, and agent steps waiting before a call of a destructive MCP tool (the message names the ' +
        'tool, its server and the arguments). Oldest first, paged (`limit`, `cursor`, `Link: rel="next"`). Decide one with ' +
        '`POST /api/v1/workflows/runs/{runId}/approve` and it leaves the list; one that times out or whose run ends ' +
        'leaves it too.',
      security: BEARER,
      requestParams: { query: pageQuery },
      responses: {
        ...ok(200, 'One page of waiting approvals', z.array(approvalView), { paged: true }),
        ...errors(400, 401),
      },
    },
  },
};
