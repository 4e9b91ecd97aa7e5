/**
 * Building blocks for the per-resource OpenAPI path objects (`api/openapi/<resource>.ts`): the envelope around a
 * zod schema, the error responses, a JSON request body. The schemas are the same objects `validate()` uses.
 */
import { z } from 'zod';
import type {
  ZodOpenApiRequestBodyObject,
  ZodOpenApiResponseObject,
  ZodOpenApiResponsesObject,
  ZodOpenApiSchemaObject,
} from 'zod-openapi';

/** Every error body: `{ data: null, error: "<message naming the field>" }`. */
export const errorEnvelopeSchema = z
  .strictObject({ data: z.null(), error: z.string().min(1) })
  .meta({ id: 'ErrorEnvelope', description: 'Error envelope: a human-readable message naming the offending field.' });

/** The success envelope around `data`. */
export function envelope<T extends z.ZodType>(data: T) {
  return z.strictObject({ data, error: z.null() });
}

const ERROR_DESCRIPTIONS = {
  400: 'Malformed JSON, an invalid or unknown field, or a `$`/dotted key; the message names the field.',
  401: 'Missing, malformed, unknown or revoked API key.',
  403: 'The resource is read-only (a system template).',
  404: 'Unknown id, an ill-formed id, or another user’s resource (indistinguishable on purpose).',
  405: 'The id is a fixed word (`tools`, `actions`): its own route does not answer this method; `Allow` lists what it answers.',
  409: 'Conflict: a request with the same idempotency key is still in flight.',
  413: 'Request body over the size limit.',
  415: 'Request body is not JSON.',
  422: '`Idempotency-Key` reused with a different body.',
  429: 'Rate limited; retry after `Retry-After` seconds.',
  500: 'Internal error (no details are leaked).',
  503: 'MongoDB or Temporal unreachable; retry after `Retry-After` seconds.',
} as const;

export type ErrorStatus = keyof typeof ERROR_DESCRIPTIONS;

/** Statuses every /api/v1 operation can answer; added to each operation by the document builder. */
export const COMMON_API_ERRORS: readonly ErrorStatus[] = [429, 500, 503];

const retryAfter = z.strictObject({
  'Retry-After': z.string().meta({ description: 'Seconds to wait before retrying.' }),
});

/** One error response object. */
export function errorResponse(status: ErrorStatus): ZodOpenApiResponseObject {
  return {
    description: ERROR_DESCRIPTIONS[status],
    ...(status === 429 || status === 503 ? { headers: retryAfter } : {}),
    content: { 'application/json': { schema: errorEnvelopeSchema } },
  };
}

/** Error responses for the given statuses: `responses: { ...ok(…), ...errors(400, 401, 404) }`. */
export function errors(...statuses: ErrorStatus[]): ZodOpenApiResponsesObject {
  const out: ZodOpenApiResponsesObject = {};
  for (const status of statuses) out[`${status}`] = errorResponse(status);
  return out;
}

const linkHeader = z.strictObject({
  Link: z.string().optional().meta({ description: 'Present when there is a next page: `<absolute url>; rel="next"`.' }),
});

/**
 * A success response in the envelope; `paged` documents the Link header of list endpoints, `location` the Location
 * header of a created resource (its description says what it points at).
 */
export function ok(
  status: 200 | 201 | 202,
  description: string,
  data: z.ZodType,
  opts: { paged?: boolean; location?: string } = {},
): ZodOpenApiResponsesObject {
  const location = opts.location
    ? z.strictObject({ Location: z.string().meta({ description: opts.location }) })
    : undefined;
  return {
    [`${status}`]: {
      description,
      ...(opts.paged ? { headers: linkHeader } : {}),
      ...(location ? { headers: location } : {}),
      content: { 'application/json': { schema: envelope(data) } },
    },
  };
}

/** A required JSON request body. */
export function jsonRequest(schema: ZodOpenApiSchemaObject, description?: string): ZodOpenApiRequestBodyObject {
  return {
    required: true,
    ...(description ? { description } : {}),
    content: { 'application/json': { schema } },
  };
}

/** Security requirement of authenticated operations (`Authorization: Bearer <api key>`). */
export const BEARER = [{ bearerAuth: [] }];
