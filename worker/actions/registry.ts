/**
 * The one binding of action type names to code. `ACTIONS` must hold exactly one definition per ActionType (a missing
 * or extra key is a compile error), and `validateActionConfig` is how the API (template mode) and the run workflow's
 * activities (run mode) check a config.
 */
import { z } from 'zod';
import { approvalAction } from './approval';
import { delayAction } from './delay';
import { httpRequestAction } from './http-request';
import { sendEmailAction } from './send-email';
import { transformAction } from './transform';
import { ACTION_TYPES, type ActionDefinition, type ActionType } from './types';

type ActionMap = { readonly [K in ActionType]: ActionDefinition<K, z.ZodObject, z.ZodType> };

export const ACTIONS = {
  send_email: sendEmailAction,
  http_request: httpRequestAction,
  transform: transformAction,
  delay: delayAction,
  approval: approvalAction,
} as const satisfies ActionMap;

/** The config a fully rendered step of action type T is parsed into. */
export type ActionConfig<T extends ActionType> = z.output<(typeof ACTIONS)[T]['config']>;
/** The output a step of action type T produces. */
export type ActionOutput<T extends ActionType> = z.output<(typeof ACTIONS)[T]['output']>;

export function isActionType(value: unknown): value is ActionType {
  return typeof value === 'string' && (ACTION_TYPES as readonly string[]).includes(value);
}

export function getAction<T extends ActionType>(type: T): (typeof ACTIONS)[T] {
  return ACTIONS[type];
}

export interface ConfigIssue {
  /** Dotted path inside the config (`to.1`, `headers.X-Foo`), '' for the object itself. */
  path: string;
  message: string;
}
export type ConfigValidation<V> = { ok: true; value: V } | { ok: false; issues: ConfigIssue[] };

/** A string carrying a `{{…}}` reference, rendered at run time; accepted in template mode in place of any field. */
const TEMPLATE_REF = /\{\{[^{}]*\}\}/;
export function isTemplateString(value: unknown): value is string {
  return typeof value === 'string' && TEMPLATE_REF.test(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when the value at `path`, or any value on the way there, is a `{{…}}` string. */
function reachesTemplate(root: unknown, path: readonly PropertyKey[]): boolean {
  let current = root;
  for (const key of path) {
    if (isTemplateString(current)) return true;
    if (Array.isArray(current) && typeof key === 'number') current = current[key];
    else if (isObject(current) && typeof key === 'string') current = current[key];
    else return false;
  }
  return isTemplateString(current);
}

function toIssues(issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  return issues.flatMap((i) => {
    const path = i.path.map(String);
    // One issue per unknown key, named by its own path, so the API's message names the field.
    if (i.code === 'unrecognized_keys') {
      return i.keys.map((key) => ({ path: [...path, key].join('.'), message: 'unknown field' }));
    }
    return [{ path: path.join('.'), message: i.message }];
  });
}

/**
 * The two schemas each mode parses with, derived once per action type: zod compiles a schema on its first parse, so
 * deriving them per call (a map of 200 HTTP items validates 200 configs) compiled them anew every time.
 */
const derived = new Map<ActionType, { run: z.ZodType; template: z.ZodType }>();
function schemasOf(type: ActionType): { run: z.ZodType; template: z.ZodType } {
  let found = derived.get(type);
  if (!found) {
    const def: ActionDefinition = ACTIONS[type];
    found = {
      run: def.refine ? def.config.superRefine((v, ctx) => def.refine?.(v, ctx)) : def.config,
      template: def.config.partial(),
    };
    derived.set(type, found);
  }
  return found;
}

/**
 * Checks an action config.
 * - `template`: at template / workflow write time. Every field is optional, and any string holding a `{{…}}`
 *   reference is accepted in place of any field (it is rendered at run time). Cross-field rules are not applied.
 *   `value` is the config as given (defaults are not filled in).
 * - `run`: after rendering: the full strict schema with defaults and cross-field rules.
 * Unknown keys are refused in both modes.
 */
export function validateActionConfig<T extends ActionType>(
  type: T,
  config: unknown,
  mode: 'run',
): ConfigValidation<ActionConfig<T>>;
export function validateActionConfig(
  type: ActionType,
  config: unknown,
  mode: 'template',
): ConfigValidation<Record<string, unknown>>;
export function validateActionConfig(
  type: ActionType,
  config: unknown,
  mode: 'template' | 'run',
): ConfigValidation<unknown>;
export function validateActionConfig(
  type: ActionType,
  config: unknown,
  mode: 'template' | 'run',
): ConfigValidation<unknown> {
  const schemas = schemasOf(type);
  if (mode === 'run') {
    const parsed = schemas.run.safeParse(config);
    return parsed.success ? { ok: true, value: parsed.data } : { ok: false, issues: toIssues(parsed.error.issues) };
  }
  const input = config ?? {};
  if (!isObject(input)) return { ok: false, issues: [{ path: '', message: 'must be an object' }] };
  const parsed = schemas.template.safeParse(input);
  if (parsed.success) return { ok: true, value: input };
  const remaining = parsed.error.issues.filter(
    (i) => i.code === 'unrecognized_keys' || !reachesTemplate(input, i.path),
  );
  return remaining.length === 0 ? { ok: true, value: input } : { ok: false, issues: toIssues(remaining) };
}

/** The config's JSON Schema as published at GET /api/v1/agents/actions (input view: defaulted fields optional). */
export function actionConfigJsonSchema(def: ActionDefinition): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(def.config, { io: 'input', unrepresentable: 'any' });
  return schema;
}

/** The output's JSON Schema. */
export function actionOutputJsonSchema(def: ActionDefinition): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(def.output, { io: 'output', unrepresentable: 'any' });
  return schema;
}
