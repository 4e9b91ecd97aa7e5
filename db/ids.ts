/**
 * Resource ids are opaque strings with a type prefix (`tpl_…`, `wf_…`, `run_…`, `usr_…`, `key_…`): readable in logs
 * and in the Temporal Web UI, and an id of the wrong shape is simply "not found".
 */
import { randomBytes } from 'node:crypto';

export type IdPrefix = 'tpl' | 'wf' | 'run' | 'usr' | 'key' | 'blob';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

const ID_SHAPE = /^[a-z]{2,4}_[A-Za-z0-9_-]{8,64}$/;

/** True when `value` could be an id of this kind; anything else is answered like an unknown id (404). */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_SHAPE.test(value);
}
