/**
 * The typed Stepwise API client: openapi-fetch over the types generated from the served OpenAPI document
 * (client/schema.d.ts, `npm run generate:client`). Paths, parameters, bodies and answers are checked by the compiler
 * against the published contract; nothing here is written by hand but the key and the base URL.
 *
 * ```ts
 * const api = createStepwiseClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.STEPWISE_API_KEY! });
 * const { data } = await api.POST('/api/v1/workflows/{id}/run', { params: { path: { id } }, body: { input: {} } });
 * ```
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, paths };
export type StepwiseClient = Client<paths>;

/** The document's named schemas: `Schemas['RunStatus']` is the run status body. */
export type Schemas = components['schemas'];

type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/**
 * The `data` of an operation's answer with status `S` (200 unless given), for answers without a named schema:
 * `ApiData<'/api/v1/workflows/{id}/run', 'post', 202>`.
 */
export type ApiData<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends {
  responses: infer R;
}
  ? S extends keyof R
    ? JsonBody<R[S]> extends { data: infer D }
      ? D
      : never
    : never
  : never;

export interface StepwiseClientOptions {
  /** `http://host:port`, without `/api/v1` (the generated paths carry it). */
  baseUrl: string;
  /** An API key (`sw_…`), sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: (input: Request) => Promise<Response>;
}

export function createStepwiseClient(opts: StepwiseClientOptions): StepwiseClient {
  return createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    headers: { Authorization: `Bearer ${opts.apiKey}` },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}
