/**
 * Checks responses the suite receives against the OpenAPI document the API serves: the operation exists, the
 * status is documented, and a JSON body matches the documented schema (Ajv, JSON Schema 2020-12 as in OpenAPI 3.1).
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { buildOpenApiDocument } from '../../api/openapi/document';

type Doc = ReturnType<typeof buildOpenApiDocument>;

export interface OpenApiChecker {
  document: Doc;
  /** Throws with a precise reason when `res` does not conform to the document. */
  check(res: Response): void;
  /** `METHOD /path/{param}` of every operation checked so far. */
  checked: Set<string>;
}

/** Path templates of the document as regexps, most specific (fewest parameters) first: `tools` beats `{id}`. */
function compilePaths(doc: Doc): { template: string; re: RegExp }[] {
  return Object.keys(doc.paths ?? {})
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      re: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
    }))
    .sort((a, b) => a.params - b.params);
}

export function openApiChecker(document: Doc = buildOpenApiDocument({ PUBLIC_URL: undefined })): OpenApiChecker {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const paths = compilePaths(document);
  const validators = new Map<string, ValidateFunction>();
  const checked = new Set<string>();
  return {
    document,
    checked,
    check(res: Response) {
      const req = (res as unknown as { req: { method: string; path: string } }).req;
      const method = req.method.toLowerCase();
      const pathname = new URL(req.path, 'http://x').pathname;
      const match = paths.find(
        (p) => p.re.test(pathname) && (document.paths?.[p.template] as Record<string, unknown>)[method],
      );
      if (!match) throw new Error(`${req.method} ${pathname}: no operation in the OpenAPI document`);
      const op = (document.paths?.[match.template] as Record<string, { responses: Record<string, unknown> }>)[method]!;
      const response = op.responses[String(res.status)] as
        { content?: Record<string, { schema?: unknown }> } | undefined;
      if (!response) throw new Error(`${req.method} ${match.template}: status ${res.status} is not documented`);
      checked.add(`${req.method} ${match.template}`);
      const schema = response.content?.['application/json']?.schema;
      if (!schema) return;
      const key = `${method} ${match.template} ${res.status}`;
      let validate = validators.get(key);
      if (!validate) {
        // Component $refs resolve against the root, so the components travel with each compiled schema.
        validate = ajv.compile({ ...schema, components: document.components });
        validators.set(key, validate);
      }
      if (!validate(res.body)) {
        throw new Error(
          `${req.method} ${pathname} ${res.status}: body does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`,
        );
      }
    },
  };
}
