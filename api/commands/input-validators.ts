/**
 * Compiled `config.input_schema` validators, cached per workflow version (id + updated_at) so a run start does not
 * compile the schema again (Ajv compilation costs far more than validation). Bounded; one cache per process (api/compose.ts).
 */
import type { ValidateFunction } from 'ajv';
import type { WorkflowDoc } from '../../db/workflows';
import type { JsonObject } from '../../domain/json';
import { BadRequestError } from '../http/errors';
import { compileUserSchema, describeInputErrors } from '../../domain/user-schema';

const MAX_ENTRIES = 500;

export interface InputValidators {
  /** Throws BadRequestError naming each offending field (`input.email: required`). */
  check(workflow: Pick<WorkflowDoc, '_id' | 'updated_at' | 'config'>, input: JsonObject): void;
}

export function createInputValidators(): InputValidators {
  const cache = new Map<string, ValidateFunction>();
  const validatorFor = (workflow: Pick<WorkflowDoc, '_id' | 'updated_at'>, schema: JsonObject): ValidateFunction => {
    const key = `${workflow._id}@${workflow.updated_at.getTime()}`;
    let fn = cache.get(key);
    if (!fn) {
      // Checked on write; compiled with the same safe compiler (RE2 patterns, linear uniqueItems, bounded $refs).
      fn = compileUserSchema(schema);
      if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
      cache.set(key, fn);
    }
    return fn;
  };
  return {
    check(workflow, input) {
      const schema = workflow.config.input_schema;
      if (!schema) return;
      const validateFn = validatorFor(workflow, schema);
      if (validateFn(input)) return;
      const problems = describeInputErrors(validateFn.errors);
      throw new BadRequestError(problems.join('; '), 'invalid_input');
    },
  };
}
