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

/**
 * A sub-workflow's run id: its parent's, then `.<step>`, `.<step>~<item>` or `.<step>~i<iteration>` per level
 * (temporal/contract/exec-id.ts childRunId).
 */
const CHILD_RUN_SHAPE = /^run_[A-Za-z0-9_-]{8,64}(?:\.[a-z][a-z0-9_-]{0,63}(?:~i?\d{1,6})?){1,8}$/;

/** True when `value` could be an id of this kind; anything else is answered like an unknown id (404). */
export function isId(prefix: IdPrefix, value: string): boolean {
  if (!value.startsWith(`${prefix}_`)) return false;
  return ID_SHAPE.test(value) || (prefix === 'run' && value.length <= 600 && CHILD_RUN_SHAPE.test(value));
}
