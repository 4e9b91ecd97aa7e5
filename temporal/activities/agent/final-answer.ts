/** Turns the model's final text into the step output, checking it against the step's output_schema (ajv). */
import type { ValidateFunction } from 'ajv';
import type { JsonObject, JsonValue } from '../../../domain/json';
import { NonRetryableError } from '../../failures';
import { compileUserSchema } from '../../../domain/user-schema';

export type FinalAnswer = { ok: true; output: JsonValue } | { ok: false; problem: string };

/** Compiles output schemas once per worker (keyed by their JSON text). */
export function createOutputChecker() {
  // The compiler the API checks the schema with on write: RE2 patterns, linear uniqueItems, bounded $refs.
  const cache = new Map<string, ValidateFunction>();

  function compile(schema: JsonObject): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = cache.get(key);
    if (!validate) {
      try {
        validate = compileUserSchema(schema);
      } catch (err) {
        throw new NonRetryableError(
          'invalid_config',
          `output_schema is not a valid JSON Schema: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      cache.set(key, validate);
    }
    return validate;
  }

  return {
    check(text: string | null, schema: JsonObject | null): FinalAnswer {
      if (!schema) return { ok: true, output: text ?? '' };
      const json = unfence(text ?? '');
      let value: JsonValue;
      try {
        value = JSON.parse(json) as JsonValue;
      } catch {
        return { ok: false, problem: 'the answer is not valid JSON' };
      }
      const validate = compile(schema);
      if (validate(value)) return { ok: true, output: value };
      const problems = (validate.errors ?? [])
        .slice(0, 5)
        .map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
      return { ok: false, problem: `the answer does not match the output schema: ${problems.join('; ')}` };
    },
  };
}

/** Models often wrap JSON in a Markdown code fence despite being told not to; one surrounding fence is accepted. */
function unfence(text: string): string {
  const trimmed = text.trim();
  const match = /^```[a-zA-Z0-9]*\n([\s\S]*)\n```$/.exec(trimmed);
  return match?.[1] ?? trimmed;
}
