/** Shared pieces of the presenters: timestamps as ISO-8601 strings, and their schema for the OpenAPI document. */
import { z } from 'zod';

// The timestamp helpers live beside the run view (shared/run-view/), which the worker builds webhook bodies with too.
export { iso, isoOrNull, isoTimestamp } from '../../shared/run-view/time';

/** A JSON object value (action config, JSON Schema…) as it appears in responses. */
export const jsonObjectView = z.record(z.string(), z.unknown());
