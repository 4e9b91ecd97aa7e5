/** OpenAPI paths of the agent-step transcript view. */
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, ok } from './kit';
import { transcriptView } from '../presenters/transcript';
import { transcriptParams, transcriptQuery } from '../schemas/transcripts';

export const transcriptPaths: ZodOpenApiPathsObject = {
  '/api/v1/workflows/runs/{runId}/steps/{stepId}/transcript': {
    get: {
      tags: ['runs'],
      summary:
        "An agent step's transcript: system prompt, model turns, tool calls with arguments and results, final answer",
      description:
        'Entries are in conversation order and paged (`limit` default 200, `cursor`, `Link: rel="next"`). ' +
        "404 for another user's run, an unknown step, or a step that is not an agent step.",
      security: BEARER,
      requestParams: { path: transcriptParams, query: transcriptQuery },
      responses: { ...ok(200, 'The transcript', transcriptView, { paged: true }), ...errors(400, 401, 404) },
    },
  },
};
