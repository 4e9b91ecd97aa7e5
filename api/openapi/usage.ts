/** OpenAPI path of the usage view. */
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, ok } from './kit';
import { usageView } from '../presenters/usage';
import { usageQuery } from '../schemas/usage';

export const usagePaths: ZodOpenApiPathsObject = {
  '/api/v1/usage': {
    get: {
      tags: ['usage'],
      summary: 'Your model usage: tokens, calls and cost by day, model, template, workflow or thread',
      description:
        'Every model call of your runs, counted once however often it was retried, on the UTC day it was first ' +
        'scheduled. `from`/`to` are UTC days, both included (default: the last 30 days; at most 400 days, which is ' +
        'how long days are kept). Rows are grouped by the `group_by` dimensions (default `day`); grouping by ' +
        '`thread` covers the last 8 days. `cost_usd` comes from the operator’s price table (USD per million input ' +
        'and output tokens by model) and is null for a row with a model the table does not price. 400 ' +
        '(`invalid_range`) when `from` is after `to`, the range is longer than 400 days, or a thread grouping ' +
        'reaches past the kept calls.',
      security: BEARER,
      requestParams: { query: usageQuery },
      responses: {
        ...ok(200, 'The usage in the range', usageView),
        ...errors(400, 401),
      },
    },
  },
};
