/**
 * Failure messages and stack traces travel as an encoded payload (`encodeCommonAttributes`), so the payload codec
 * encrypts them like any other payload: an error's message often quotes the data it failed on (a URL, an address, an
 * expression's input). Temporal then stores "Encoded failure" as the message; the client, the worker and the Web UI
 * (through the codec endpoint) restore the original.
 *
 * One module for the three places that convert failures, because they must agree: the workflow bundle
 * (temporal/bundle.ts, failureConverterPath), the worker's activities (temporal/create-worker.ts) and the API's client.
 * It lives in domain/ because the sandbox loads it.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
