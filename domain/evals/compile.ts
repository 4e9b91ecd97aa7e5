/**
 * Scorers are compiled when an experiment is created, not when its first item is scored: a pattern RE2 refuses, a
 * JSONata syntax error, an invalid JSON Schema or a duplicate name is a 400 naming the scorer, never a thousand items
 * scored 0 (issue #47, item 8). What compiles here is kept (the RE2 program, the Ajv validator, the parsed paths), so
 * scoring repeats no parsing.
 */
import jsonata from 'jsonata';
import type { ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';
import type { z } from 'zod';
import { compileUserSchema } from '../user-schema';
import { scorerListSchema, type ScorerConfig, type ScorerKind, type ScorerOf } from './declarations';
import { parseFieldPath, type FieldPath } from './field-path';

/** One scorer refused at creation: `path` names the field (`scorers[2].pattern`), `message` says why. */
export interface ScorerError {
  path: string;
  message: string;
}

interface Base<K extends ScorerKind> {
  kind: K;
  /** Unique in the list (given, or derived from the kind). */
  name: string;
  config: ScorerOf<K>;
}

/** A scorer ready to score: its config plus what was compiled from it. */
export type CompiledScorer =
  | (Base<'exact'> & { path?: FieldPath; expectedPath?: FieldPath })
  | (Base<'contains'> & { path?: FieldPath })
  | (Base<'regex'> & { path?: FieldPath; regex: RE2JS })
  | (Base<'json_schema'> & { path?: FieldPath; validate: ValidateFunction })
  | Base<'jsonata'>
  | Base<'trajectory'>
  | Base<'cost'>
  | Base<'latency'>
  | Base<'llm_judge'>;

export type CompileResult = { ok: true; scorers: CompiledScorer[] } | { ok: false; errors: ScorerError[] };

/**
 * Validates and compiles a scorer list as a request holds it (`field` prefixes every error path). Returns every
 * problem found, each with its path; the list compiles only when there is none.
 */
export function compileScorers(input: unknown, field = 'scorers'): CompileResult {
  const parsed = scorerListSchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: zodErrors(parsed.error, field) };
  const errors: ScorerError[] = [];
  const names = assignNames(parsed.data, field, errors);
  const scorers: CompiledScorer[] = [];
  parsed.data.forEach((config, i) => {
    const compiled = compileOne(config, names[i]!, `${field}[${i}]`, errors);
    if (compiled) scorers.push(compiled);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, scorers };
}

/** Compiles one scorer (its name: given, or the kind); throws an Error listing the problems. For tests and tools. */
export function compileScorer(input: unknown): CompiledScorer {
  const result = compileScorers([input], 'scorer');
  if (!result.ok) throw new Error(result.errors.map((e) => `${e.path}: ${e.message}`).join('; '));
  return result.scorers[0]!;
}

function zodErrors(error: z.ZodError, field: string): ScorerError[] {
  return error.issues.slice(0, 20).map((issue) => ({
    path: issue.path.reduce<string>((s, k) => (typeof k === 'number' ? `${s}[${k}]` : `${s}.${String(k)}`), field),
    message: issue.message,
  }));
}

/**
 * Names: a given name must be unique; an unnamed scorer gets its kind, or `kind_2`, `kind_3` … when that is taken.
 * Derived names depend only on the list's order, so the same list names its scorers the same in every experiment —
 * the comparison matches scorers by name.
 */
function assignNames(configs: ScorerConfig[], field: string, errors: ScorerError[]): string[] {
  const taken = new Set<string>();
  configs.forEach((c, i) => {
    if (c.name === undefined) return;
    if (taken.has(c.name)) {
      errors.push({ path: `${field}[${i}].name`, message: `duplicate scorer name "${c.name}"` });
    }
    taken.add(c.name);
  });
  return configs.map((c) => {
    if (c.name !== undefined) return c.name;
    let name: string = c.kind;
    for (let n = 2; taken.has(name); n++) name = `${c.kind}_${n}`;
    taken.add(name);
    return name;
  });
}

function compilePath(text: string | undefined, at: string, errors: ScorerError[]): FieldPath | undefined {
  if (text === undefined) return undefined;
  const parsed = parseFieldPath(text);
  if (parsed.ok) return parsed.path;
  errors.push({ path: at, message: `not a field path (${parsed.message})` });
  return undefined;
}

function compileOne(config: ScorerConfig, name: string, at: string, errors: ScorerError[]): CompiledScorer | undefined {
  const before = errors.length;
  switch (config.kind) {
    case 'exact': {
      const path = compilePath(config.path, `${at}.path`, errors);
      const expectedPath = compilePath(config.expected_path, `${at}.expected_path`, errors);
      return errors.length > before ? undefined : { kind: config.kind, name, config, path, expectedPath };
    }
    case 'contains': {
      const path = compilePath(config.path, `${at}.path`, errors);
      return errors.length > before ? undefined : { kind: config.kind, name, config, path };
    }
    case 'regex': {
      const path = compilePath(config.path, `${at}.path`, errors);
      const regex = compileRegex(config.pattern, config.ignore_case, `${at}.pattern`, errors);
      return regex && errors.length === before ? { kind: config.kind, name, config, path, regex } : undefined;
    }
    case 'json_schema': {
      const path = compilePath(config.path, `${at}.path`, errors);
      let validate: ValidateFunction | undefined;
      try {
        validate = compileUserSchema(config.schema);
      } catch (err) {
        const why = err instanceof Error ? err.message : 'invalid';
        errors.push({ path: `${at}.schema`, message: `not a valid JSON Schema (${why})` });
      }
      return validate && errors.length === before ? { kind: config.kind, name, config, path, validate } : undefined;
    }
    case 'jsonata': {
      const problem = jsonataProblem(config.expression);
      if (problem) errors.push({ path: `${at}.expression`, message: problem });
      return problem ? undefined : { kind: config.kind, name, config };
    }
    case 'trajectory':
      return { kind: config.kind, name, config };
    case 'cost':
      return { kind: config.kind, name, config };
    case 'latency':
      return { kind: config.kind, name, config };
    case 'llm_judge':
      return { kind: config.kind, name, config };
  }
}

/** A user pattern on RE2: linear time whatever the pattern and the text; backtracking-only features refused. */
function compileRegex(pattern: string, ignoreCase: boolean, at: string, errors: ScorerError[]): RE2JS | undefined {
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : 'invalid';
    errors.push({
      path: at,
      message: `the pattern does not compile on RE2 (no backreferences or lookarounds): ${why}`,
    });
    return undefined;
  }
}

interface JsonataError {
  code?: string;
  position?: number;
  token?: string;
  message?: string;
}

/**
 * Why `expression` would not run, or undefined. Parsing is pure and linear in the expression's length (bounded by
 * the schema); evaluation is not, and happens only in the worker's bounded evaluator. Regex literals are checked
 * against RE2 here too: the evaluator runs them on RE2 and would refuse them on the first item.
 */
export function jsonataProblem(expression: string): string | undefined {
  let ast: unknown;
  try {
    ast = jsonata(expression).ast();
  } catch (err) {
    // The parser recurses once per nesting level: ten thousand `(` overflow its stack before any syntax rule fires.
    if (err instanceof RangeError) return 'JSONata syntax error: the expression is nested too deeply to parse';
    const e = (typeof err === 'object' && err !== null ? err : {}) as JsonataError;
    const at = typeof e.position === 'number' ? ` at character ${e.position}` : '';
    const code = e.code ? ` [${e.code}]` : '';
    return `JSONata syntax error${at}: ${e.message ?? String(err)}${code}`;
  }
  for (const re of regexLiterals(ast)) {
    try {
      RE2JS.compile(RE2JS.translateRegExp(re.source));
    } catch (err) {
      const why = err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : 'invalid';
      return `regular expression /${re.source.slice(0, 60)}/ is not supported (RE2 syntax, no backreferences or lookarounds): ${why}`;
    }
  }
  return undefined;
}

/** Every `/…/` literal in a JSONata AST (a tree of plain objects; a node limit guards against surprises). */
function regexLiterals(ast: unknown): RegExp[] {
  const found: RegExp[] = [];
  const seen = new Set<object>();
  const stack: unknown[] = [ast];
  while (stack.length > 0 && seen.size < 100_000) {
    const node = stack.pop();
    if (node instanceof RegExp) found.push(node);
    else if (typeof node === 'object' && node !== null && !seen.has(node)) {
      seen.add(node);
      for (const value of Object.values(node)) stack.push(value);
    }
  }
  return found;
}
