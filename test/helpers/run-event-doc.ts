/**
 * A run event as the OpenAPI document promises it: tests of the clients' folds build their events through this, so
 * they test what the contract allows rather than shapes they make up.
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../api/openapi/document';
import type { Schemas } from '../../client';

const document = buildOpenApiDocument({ PUBLIC_URL: undefined });
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const isRunEvent = ajv.compile({ $ref: '#/components/schemas/RunEvent', components: document.components });

/** `value` typed as the document's RunEvent of its `type`; throws with Ajv's reasons when it is not one. */
export function documentedEvent<T extends Schemas['RunEvent']>(value: T): T {
  if (!isRunEvent(value)) throw new Error(`not a documented RunEvent: ${ajv.errorsText(isRunEvent.errors)}`);
  return value;
}
