/** OpenAPI paths of inbound webhooks (hooks). */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, jsonRequest, ok } from './kit';
import { hookView } from '../presenters/hook';
import { pageQuery } from '../http/pagination';
import {
  createHookBody,
  hookIdParams,
  updateHookBody,
  workflowHookParams,
  workflowHooksParams,
} from '../schemas/hooks';
import { jsonDataObject } from '../schemas/json';

const tags = ['hooks'];
const signedHeaders = z.strictObject({
  'webhook-id': z.string().optional().meta({ description: 'Signed hooks: the message id, their only duplicate key.' }),
  'webhook-timestamp': z.string().optional().meta({ description: 'Signed hooks: unix seconds, within 5 minutes.' }),
  'webhook-signature': z.string().optional().meta({ description: 'Signed hooks: `v1,<base64 HMAC-SHA256>`.' }),
  'Idempotency-Key': z
    .string()
    .max(500)
    .optional()
    .meta({ description: 'Unsigned hooks: drops a repeated delivery. Ignored by signed hooks (it is not signed).' }),
});

export const hooksPaths: ZodOpenApiPathsObject = {
  '/api/v1/workflows/{id}/hooks': {
    get: {
      tags,
      summary: "The workflow's inbound webhooks",
      security: BEARER,
      requestParams: { path: workflowHooksParams, query: pageQuery },
      responses: { ...ok(200, 'One page of hooks', z.array(hookView), { paged: true }), ...errors(400, 401, 404) },
    },
    post: {
      tags,
      summary: 'Create an inbound webhook that starts runs of the workflow',
      description:
        'Answers with the hook, its public `url` and (unless `signed: false`) its `secret`, shown only here and on ' +
        'rotation. 409 past HOOKS_MAX_PER_WORKFLOW.',
      security: BEARER,
      requestParams: { path: workflowHooksParams },
      // Optional: a hook without a body gets the defaults (no name, signed, enabled).
      requestBody: { content: { 'application/json': { schema: createHookBody } } },
      responses: { ...ok(201, 'The new hook, with its secret', hookView), ...errors(400, 401, 404, 409, 413, 415) },
    },
  },
  '/api/v1/workflows/{id}/hooks/{hookId}': {
    get: {
      tags,
      summary: 'One hook',
      security: BEARER,
      requestParams: { path: workflowHookParams },
      responses: { ...ok(200, 'The hook', hookView), ...errors(401, 404) },
    },
    patch: {
      tags,
      summary: 'Rename, disable or enable a hook',
      security: BEARER,
      requestParams: { path: workflowHookParams },
      requestBody: jsonRequest(updateHookBody),
      responses: { ...ok(200, 'The hook', hookView), ...errors(400, 401, 404, 413, 415) },
    },
    delete: {
      tags,
      summary: 'Delete a hook',
      security: BEARER,
      requestParams: { path: workflowHookParams },
      responses: {
        ...ok(200, 'Deleted', z.strictObject({ id: z.string(), deleted: z.literal(true) })),
        ...errors(401, 404),
      },
    },
  },
  '/api/v1/workflows/{id}/hooks/{hookId}/rotate-secret': {
    post: {
      tags,
      summary: "Replace a hook's signing secret (and require signatures from now on)",
      security: BEARER,
      requestParams: { path: workflowHookParams },
      responses: { ...ok(200, 'The hook, with its new secret', hookView), ...errors(401, 404) },
    },
  },
  '/api/v1/hooks/{hookId}': {
    post: {
      tags,
      summary: 'Deliver to an inbound webhook: start a run with the body as input (no API key)',
      description:
        'The body (a JSON object) is the run input, checked against the workflow’s input_schema. A signed hook ' +
        'needs Standard Webhooks headers (HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>` with the ' +
        'hook’s secret; the timestamp within 5 minutes). A repeated `webhook-id` (signed) or `Idempotency-Key` (unsigned) ' +
        'answers with the first run. Unknown and disabled hooks: 404. Rate limited per hook (HOOK_RATE_LIMIT_PER_MINUTE).',
      requestParams: { path: hookIdParams, header: signedHeaders },
      requestBody: { content: { 'application/json': { schema: jsonDataObject } } },
      responses: {
        ...ok(
          202,
          'The run was started',
          z.strictObject({ run_id: z.string(), workflow_id: z.string(), status: z.literal('queued') }),
        ),
        ...errors(400, 401, 404, 409, 413, 415, 422),
      },
    },
  },
};
