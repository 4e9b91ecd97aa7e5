/**
 * The API's validation message (`steps[1] (notify).config.to: required; name: must not be empty`) rewritten for a
 * definition file: `orders.yaml: workflow "Orders": step "notify": field "config.to": required`, one line per problem.
 */
import type { Definition } from './file';

const STEP_PROBLEM = /^steps\[(\d+)\](?: \(([^)]*)\))?(?:\.([^:]+))?: ([\s\S]*)$/;
const FIELD_PROBLEM = /^([A-Za-z_][\w.[\]]*): ([\s\S]*)$/;

/** One line per problem of `message`; `kind` is `workflow` or `template`. */
export function describeProblems(def: Definition, kind: string, message: string): string[] {
  const steps = Array.isArray(def.body.steps) ? (def.body.steps as unknown[]) : [];
  const head = `${def.where}: ${kind} "${String(def.body.name)}"`;
  return message.split('; ').map((part) => {
    const step = STEP_PROBLEM.exec(part);
    if (step) {
      const [, index, named, field, text] = step;
      const written = steps[Number(index)] as { id?: unknown } | undefined;
      const id = named ?? (typeof written?.id === 'string' ? written.id : `#${Number(index) + 1}`);
      return `${head}: step "${id}"${field ? `: field "${field}"` : ''}: ${text}`;
    }
    const field = FIELD_PROBLEM.exec(part);
    if (field) return `${head}: field "${field[1]}": ${field[2]}`;
    return `${head}: ${part}`;
  });
}
