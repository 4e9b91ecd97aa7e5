/** The OpenAPI document as the generated client's types see it (client/generate-schema.ts). */
/** Keywords that shape a value's type; a schema with none of them only asserts something about a value. */
const TYPE_KEYWORDS = ['type', 'properties', 'items', '$ref', 'enum', 'const', 'additionalProperties', 'prefixItems'];

const assertsOnly = (schema: unknown): boolean =>
  typeof schema === 'object' && schema !== null && !TYPE_KEYWORDS.some((k) => k in schema);

/**
 * The document without the rules TypeScript cannot state: `not`, and `anyOf`/`oneOf` whose members only assert
 * (`{required: [...]}` — "exactly one of template, template_id and workflow_id"). openapi-typescript renders each such
 * member as `unknown`, and a union with `unknown` is `unknown`: the object it constrains would lose its type. The
 * server enforces those rules and the served document states them; the client's types keep the shapes.
 */
export function typesOnly<T>(document: T): T {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== 'object' || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'not') continue;
      if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(value) && value.every(assertsOnly)) continue;
      out[key] = walk(value);
    }
    return out;
  };
  return walk(document) as T;
}
