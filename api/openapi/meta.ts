/** OpenAPI paths of the public service routes: health, metrics and the document itself. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errors, ok } from './kit';

export const metaPaths: ZodOpenApiPathsObject = {
  '/livez': {
    get: {
      tags: ['service'],
      summary: 'Liveness: the process answers',
      responses: { ...ok(200, 'Alive', z.strictObject({ status: z.literal('ok') })) },
    },
  },
  '/readyz': {
    get: {
      tags: ['service'],
      summary: 'Readiness: MongoDB and Temporal reachable',
      responses: {
        ...ok(
          200,
          'Ready',
          z.strictObject({ status: z.literal('ready'), mongodb: z.literal('up'), temporal: z.literal('up') }),
        ),
        ...errors(503),
      },
    },
  },
  '/metrics': {
    get: {
      tags: ['service'],
      summary: 'Prometheus metrics',
      responses: {
        '200': {
          description: 'Metrics in the Prometheus text format',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
      },
    },
  },
  '/api/v1/openapi.json': {
    get: {
      tags: ['service'],
      summary: 'This OpenAPI 3.1 document (served as is, not in the envelope, so tools can read it)',
      responses: {
        '200': { description: 'The document', content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
  },
};
