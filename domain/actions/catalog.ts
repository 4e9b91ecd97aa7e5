/**
 * The catalog of action types, derived from the declarations (./declarations.ts): the names (`ActionType`), a lookup
 * by name, and `validateActionConfig`, how the API (template mode) and the worker's activities (run mode) check a
 * config. Nothing here names an action type: adding one to the list is all this module needs.
 */
import { z } from 'zod';
import { ACTION_DECLARATIONS } from './declarations';
import type { ActionDeclaration } from './types';

type Declared = (typeof ACTION_DECLARATIONS)[number];

/** An action type's name (`step_type: action`). */
export type ActionType = Declared['name'];

/** Action types the worker performs as an activity (regular or local); the others the workflow performs itself. */
export type ActivityActionType = Extract<Declared, { effect: 'side_effect' | 'pure' }>['name'];

/** The declaration of action type T, with its own schemas' types. */
export type ActionDeclarationOf<T extends ActionType> = Extract<Declared, { name: T }>;

/** Every action type's name, in the list's order. */
export const ACTION_TYPES: readonly ActionType[] = ACTION_DECLARATIONS.map((d) => d.name);

/** Each declaration by its name. */
export const ACTION_CATALOG = byName(ACTION_DECLARATIONS) as { readonly [K in ActionType]: ActionDeclarationOf<K> };

function byName(declarations: readonly ActionDeclaration[]): Readonly<Record<string, ActionDeclaration>> {
  // A null prototype: `constructor` or `__proto__` is not an action type.
  const map: Record<string, ActionDeclaration> = Object.create(null) as Record<string, ActionDeclaration>;
  for (const d of declarations) {
    if (map[d.name]) throw new Error(`action type ${d.name} is declared twice`);
    map[d.name] = d;
  }
  return map;
}

/** The config a fully rendered step of action type T is parsed into. */
export type ActionConfig<T extends ActionType> = z.output<ActionDeclarationOf<T>['config']>;

export function isActionType(value: unknown): value is ActionType {
  return typeof value === 'string' && Object.hasOwn(ACTION_CATALOG, value);
}

export function getActionDeclaration<T extends ActionType>(type: T): ActionDeclarationOf<T> {
  return ACTION_CATALOG[type];
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
    const def: ActionDeclaration = ACTION_CATALOG[type];
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
export function actionConfigJsonSchema(def: ActionDeclaration): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(def.config, { io: 'input', unrepresentable: 'any' });
  return schema;
}

/** The output's JSON Schema. */
export function actionOutputJsonSchema(def: ActionDeclaration): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(def.output, { io: 'output', unrepresentable: 'any' });
  return schema;
}
