/**
 * The catalog of built-in agent tools, derived from the declarations (./declarations.ts): the names (`ToolName`), a
 * lookup by name and the parameters' JSON Schema. The worker binds the same names to code in
 * temporal/tools/implementations.ts.
 */
import { z } from 'zod';
import { TOOL_DECLARATIONS } from './declarations';
import type { ToolDeclaration } from './types';

export { TOOL_DECLARATIONS };

type Declared = (typeof TOOL_DECLARATIONS)[number];

/** A built-in tool's name. */
export type ToolName = Declared['name'];

/** Every tool's name, in the order the tools endpoint lists them. */
export const TOOL_NAMES: readonly ToolName[] = TOOL_DECLARATIONS.map((t) => t.name);

/** Each declaration by its name (a null prototype: `constructor` is not a tool). */
export const TOOL_CATALOG = byName(TOOL_DECLARATIONS) as { readonly [K in ToolName]: Extract<Declared, { name: K }> };

function byName(declarations: readonly ToolDeclaration[]): Readonly<Record<string, ToolDeclaration>> {
  const map: Record<string, ToolDeclaration> = Object.create(null) as Record<string, ToolDeclaration>;
  for (const d of declarations) {
    if (map[d.name]) throw new Error(`tool ${d.name} is declared twice`);
    map[d.name] = d;
  }
  return map;
}

export function isToolName(value: unknown): value is ToolName {
  return typeof value === 'string' && Object.hasOwn(TOOL_CATALOG, value);
}

/**
 * The tool's parameters as JSON Schema (draft 2020-12, without `$schema`): published by GET /api/v1/agents/tools and
 * sent to the model as the function's parameters. Input view: fields with defaults are optional.
 */
export function toolParametersSchema(tool: ToolDeclaration): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' });
  return schema;
}
