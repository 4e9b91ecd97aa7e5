/**
 * Definition files of `workflows apply` / `agents apply`: YAML or JSON (JSON is YAML), holding one definition, a list
 * of them, or several YAML documents (`---`). Every problem names the file, and the definition and field when it can.
 */
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { CliError } from '../errors';

/** One definition of a file: its position (for messages) and its fields as written. */
export interface Definition {
  /** `orders.yaml`, `orders.yaml#2` for the second definition of a file holding several. */
  where: string;
  body: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The definitions of `file`; a syntax error or a non-object entry is a CliError naming the file (and line). */
export async function readDefinitions(file: string): Promise<Definition[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const values: unknown[] = [];
  for (const doc of parseAllDocuments(text)) {
    const [error] = doc.errors;
    if (error) {
      const line = error.linePos?.[0].line;
      throw new CliError(`${file}${line ? `:${line}` : ''}: not valid YAML or JSON: ${error.message.split('\n')[0]}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    values.push(...(Array.isArray(value) ? (value as unknown[]) : [value]));
  }
  if (values.length === 0) throw new CliError(`${file}: no definition in the file`);
  return values.map((body, i) => {
    const where = values.length > 1 ? `${file}#${i + 1}` : file;
    if (!isObject(body))
      throw new CliError(`${where}: a definition is an object (name, …), not ${JSON.stringify(body)}`);
    return { where, body };
  });
}

/** The definition's `name`, required to match it with what is stored; trimmed, as the server stores names. */
export function definitionName(def: Definition): string {
  const name = def.body.name;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new CliError(`${def.where}: field "name": required (definitions are matched by name)`);
  }
  return name.trim();
}
