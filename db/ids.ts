/**
 * Resource ids are opaque strings with a type prefix (`tpl_…`, `wf_…`, `run_…`, `usr_…`, `key_…`): readable in logs
 * and in the Temporal Web UI, and an id of the wrong shape is simply "not found".
 */
import { randomBytes } from 'node:crypto';

export type IdPrefix = 'tpl' | 'wf' | 'run' | 'usr' | 'key' | 'blob' | 'sch' | 'mcp' | 'ds' | 'itm' | 'thr' | 'exp';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

const ID_SHAPE = /^[a-z]{2,4}_[A-Za-z0-9_-]{8,64}$/;

/**
 * A sub-workflow's run id: its parent's, then `.<step>`, `.<step>~<item>` or `.<step>~i<iteration>` per level
 * (domain/exec-id.ts childRunId).
 */
const CHILD_RUN_SHAPE =
  /^run_[A-Za-z0-9_-]{8,64}(?:-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)?(?:\.[a-z][a-z0-9_-]{0,63}(?:~i?\d{1,6})?){1,8}$/;

/**
 * A scheduled run's id: Temporal names each execution a schedule starts `<action workflow id>-<RFC 3339 UTC time>`
 * (domain/schedule.ts), e.g. `run_Ab3…-2026-11-23T08:00:00Z`.
 */
const SCHEDULED_RUN_SHAPE = /^run_[A-Za-z0-9_-]{8,64}-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** True when `value` could be an id of this kind; anything else is answered like an unknown id (404). */
export function isId(prefix: IdPrefix, value: string): boolean {
  if (!value.startsWith(`${prefix}_`)) return false;
  if (ID_SHAPE.test(value)) return true;
  return prefix === 'run' && value.length <= 600 && (SCHEDULED_RUN_SHAPE.test(value) || CHILD_RUN_SHAPE.test(value));
}
