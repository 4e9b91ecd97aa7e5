/**
 * Conditions of workflow graphs: a step's `when` (run it or skip it) and a loop's `until`. A small expression
 * language, parsed by hand in one left-to-right pass and evaluated in workflow code: no clock, no randomness, no I/O,
 * no `eval`, bounded in size and depth. Pure and workflow-safe.
 *
 * ```
 * steps.classify.output.category == "billing"
 * steps.call.output.status < 400
 * len(steps.search.output.items) > 0
 * steps.fetch.status == "failed" || exists(steps.fetch.output.error)
 * steps.review.output.verdict in ["approve", "ok"] && !(input.dry_run == true)
 * ```
 *
 * Grammar: `expr := or`, `or := and ('||' and)*`, `and := unary ('&&' unary)*`, `unary := '!' unary | cmp`,
 * `cmp := operand (('=='|'!='|'<'|'<='|'>'|'>='|'in') operand)?`, `operand := literal | reference | call |
 * '(' expr ')' | '[' expr, … ']'`. Literals: JSON numbers, strings in double or single quotes (JSON escapes), `true`,
 * `false`, `null`. References are those of `{{…}}` templates, written bare or in braces (`input.a[0]`,
 * `steps.<id>.output…`, `steps.<id>.status`, `map.item…`, `map.index`, `loop.iteration`, `loop.previous…`).
 * Functions: `len(x)`, `exists(x)`, `contains(a, b)`, `lower(x)`, `upper(x)`.
 *
 * Semantics:
 * - a path missing inside a value is `null` (no error), so `exists(…)` tests for it; a step that is not finished (or
 *   not known) is an error — the API only accepts references to steps that finish first;
 * - `==` / `!=` compare JSON values deeply (object key order does not matter); `<` `<=` `>` `>=` compare two numbers
 *   or two strings, anything else is false; `a in b` is element membership when b is a list, substring when both
 *   are strings, false otherwise;
 * - `len` gives the length of a string or list or the key count of an object, else null; `exists(x)` is x ≠ null;
 *   `contains(a, b)` is `b in a`; `lower` / `upper` work on strings, else null;
 * - truthiness (for `!`, `&&`, `||` and the result): false, null, 0, "", [] and {} are false, everything else true;
 * - an output over 64 KiB is kept by reference outside the workflow, so a condition cannot read into it (an
 *   error); only `exists()` of it works.
 */
import type { JsonObject, JsonValue } from './json';
import { parseReference, RenderError, type PathSegment, type Reference } from './render';
import { isOutputRef, type OutputRef, type StepStatus } from './run';

/** Longest condition text. */
export const MAX_CONDITION_CHARS = 2_000;
/** Deepest nesting of parentheses, lists, calls and `!`. */
export const MAX_CONDITION_DEPTH = 32;
/** Most nodes of a parsed condition. */
export const MAX_CONDITION_NODES = 500;

export class ConditionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConditionError';
  }
}

type Op = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in';
const FUNCTIONS = ['len', 'exists', 'contains', 'lower', 'upper'] as const;
type FunctionName = (typeof FUNCTIONS)[number];
const ARITY: Record<FunctionName, number> = { len: 1, exists: 1, contains: 2, lower: 1, upper: 1 };

type Node =
  | { kind: 'literal'; value: JsonValue }
  | { kind: 'ref'; ref: Reference }
  | { kind: 'list'; items: Node[] }
  | { kind: 'call'; name: FunctionName; args: Node[] }
  | { kind: 'not'; operand: Node }
  | { kind: 'and' | 'or'; left: Node; right: Node }
  | { kind: 'cmp'; op: Op; left: Node; right: Node };

/** A parsed condition. Built from the text each time it is used; never sent through Temporal. */
export interface Condition {
  readonly text: string;
  readonly root: Node;
}

/** What a condition can read. */
export interface ConditionScope {
  input: JsonObject;
  /** Steps that have finished (completed, skipped, or failed and continued): output is null for skipped ones. */
  steps: Record<string, { status: StepStatus; output: JsonValue | OutputRef | null }>;
  map?: { item: JsonValue; index: number };
  loop?: { iteration: number; previous: JsonValue | OutputRef | null };
}

// --- tokens -------------------------------------------------------------------------------------------------------

type Token =
  | { t: 'num'; value: number; at: number }
  | { t: 'str'; value: string; at: number }
  | { t: 'word'; value: string; at: number }
  | { t: 'ref'; value: string; at: number }
  | { t: 'punct'; value: string; at: number }
  | { t: 'end'; at: number };

const PUNCT = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '!', '(', ')', '[', ']', ','];
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WORD = /[A-Za-z_][\w-]*/y;

function describeToken(tok: Token): string {
  switch (tok.t) {
    case 'end':
      return 'the end';
    case 'num':
      return String(tok.value);
    case 'str':
      return JSON.stringify(tok.value.length > 20 ? `${tok.value.slice(0, 20)}…` : tok.value);
    case 'word':
    case 'ref':
    case 'punct':
      return `"${tok.value.length > 30 ? `${tok.value.slice(0, 30)}…` : tok.value}"`;
  }
}

function fail(at: number, message: string): never {
  throw new ConditionError(`at ${at}: ${message}`);
}

/** Reads a quoted string starting at `start` (the quote); JSON escapes. Returns the value and the offset after it. */
function readString(text: string, start: number): [string, number] {
  const quote = text[start];
  let out = '';
  let i = start + 1;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === quote) return [out, i + 1];
    if (c === '\\') {
      const e = text[i + 1];
      const simple: Record<string, string> = {
        '"': '"',
        "'": "'",
        '\\': '\\',
        '/': '/',
        b: '\b',
        f: '\f',
        n: '\n',
        r: '\r',
        t: '\t',
      };
      if (e !== undefined && simple[e] !== undefined) {
        out += simple[e];
        i += 2;
        continue;
      }
      if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
        i += 6;
        continue;
      }
      fail(i, 'invalid escape in a string');
    }
    out += c;
    i++;
  }
  return fail(start, 'unterminated string');
}

/**
 * A reference runs from a word through `.name`, `[digits]` and `["key"]` / `['key']` segments; its text is handed
 * to parseReference (render.ts), so paths mean exactly what they mean in `{{…}}` templates.
 */
function readPath(text: string, start: number): number {
  let i = start;
  WORD.lastIndex = i;
  if (!WORD.exec(text)) return i;
  i = WORD.lastIndex;
  for (;;) {
    if (text[i] === '.') {
      WORD.lastIndex = i + 1;
      if (!WORD.exec(text)) fail(i + 1, 'expected a name after "."');
      i = WORD.lastIndex;
    } else if (text[i] === '[') {
      const q = text[i + 1];
      if (q === '"' || q === "'") {
        const [, after] = readString(text, i + 1);
        if (text[after] !== ']') fail(after, 'expected "]"');
        i = after + 1;
      } else if (q !== undefined && q >= '0' && q <= '9') {
        let j = i + 1;
        while (text[j] !== undefined && (text[j] as string) >= '0' && (text[j] as string) <= '9') j++;
        if (text[j] !== ']') fail(j, 'expected "]"');
        i = j + 1;
      } else {
        return i; // a list literal follows a reference only in error; the parser reports it
      }
    } else {
      return i;
    }
  }
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const [value, after] = readString(text, i);
      tokens.push({ t: 'str', value, at: i });
      i = after;
      continue;
    }
    if (c === '{' && text[i + 1] === '{') {
      const close = text.indexOf('}}', i + 2);
      if (close === -1) fail(i, 'unclosed "{{"');
      tokens.push({ t: 'ref', value: text.slice(i + 2, close).trim(), at: i });
      i = close + 2;
      continue;
    }
    NUMBER.lastIndex = i;
    if ((c === '-' || (c >= '0' && c <= '9')) && NUMBER.exec(text)) {
      tokens.push({ t: 'num', value: Number(text.slice(i, NUMBER.lastIndex)), at: i });
      i = NUMBER.lastIndex;
      continue;
    }
    const punct = PUNCT.find((p) => text.startsWith(p, i));
    if (punct) {
      tokens.push({ t: 'punct', value: punct, at: i });
      i += punct.length;
      continue;
    }
    WORD.lastIndex = i;
    const word = WORD.exec(text);
    if (word) {
      const w = word[0];
      const isKeyword = ['true', 'false', 'null', 'in', ...FUNCTIONS].includes(w);
      const end = isKeyword ? WORD.lastIndex : readPath(text, i);
      tokens.push(isKeyword ? { t: 'word', value: w, at: i } : { t: 'ref', value: text.slice(i, end), at: i });
      i = end;
      continue;
    }
    fail(i, `unexpected character "${c}"`);
  }
  tokens.push({ t: 'end', at: text.length });
  return tokens;
}

// --- parser -------------------------------------------------------------------------------------------------------

class Parser {
  private pos = 0;
  private depth = 0;
  private nodes = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): Node {
    const node = this.or();
    const tok = this.peek();
    if (tok.t !== 'end') fail(tok.at, `expected an operator or the end, found ${describeToken(tok)}`);
    return node;
  }

  private peek(): Token {
    return this.tokens[this.pos] as Token;
  }

  private isPunct(value: string): boolean {
    const tok = this.peek();
    return tok.t === 'punct' && tok.value === value;
  }

  private expect(value: string): void {
    const tok = this.peek();
    if (!(tok.t === 'punct' && tok.value === value)) fail(tok.at, `expected "${value}", found ${describeToken(tok)}`);
    this.pos++;
  }

  private node<N extends Node>(n: N): N {
    if (++this.nodes > MAX_CONDITION_NODES)
      fail(this.peek().at, `a condition has at most ${MAX_CONDITION_NODES} parts`);
    return n;
  }

  private nested<T>(at: number, inner: () => T): T {
    if (++this.depth > MAX_CONDITION_DEPTH) fail(at, `a condition nests at most ${MAX_CONDITION_DEPTH} deep`);
    try {
      return inner();
    } finally {
      this.depth--;
    }
  }

  private or(): Node {
    let left = this.and();
    while (this.isPunct('||')) {
      this.pos++;
      left = this.node({ kind: 'or', left, right: this.and() });
    }
    return left;
  }

  private and(): Node {
    let left = this.unary();
    while (this.isPunct('&&')) {
      this.pos++;
      left = this.node({ kind: 'and', left, right: this.unary() });
    }
    return left;
  }

  private unary(): Node {
    if (this.isPunct('!')) {
      const at = this.peek().at;
      this.pos++;
      return this.nested(at, () => this.node({ kind: 'not', operand: this.unary() }));
    }
    return this.cmp();
  }

  private cmp(): Node {
    const left = this.operand();
    const tok = this.peek();
    const op =
      tok.t === 'punct' && ['==', '!=', '<', '<=', '>', '>='].includes(tok.value)
        ? (tok.value as Op)
        : tok.t === 'word' && tok.value === 'in'
          ? 'in'
          : undefined;
    if (!op) return left;
    this.pos++;
    return this.node({ kind: 'cmp', op, left, right: this.operand() });
  }

  private operand(): Node {
    const tok = this.peek();
    switch (tok.t) {
      case 'num':
        this.pos++;
        return this.node({ kind: 'literal', value: tok.value });
      case 'str':
        this.pos++;
        return this.node({ kind: 'literal', value: tok.value });
      case 'ref':
        this.pos++;
        return this.node({ kind: 'ref', ref: reference(tok.value, tok.at) });
      case 'word': {
        if (tok.value === 'true' || tok.value === 'false') {
          this.pos++;
          return this.node({ kind: 'literal', value: tok.value === 'true' });
        }
        if (tok.value === 'null') {
          this.pos++;
          return this.node({ kind: 'literal', value: null });
        }
        if ((FUNCTIONS as readonly string[]).includes(tok.value)) return this.call(tok.value as FunctionName, tok.at);
        return fail(tok.at, `expected an operand, found ${describeToken(tok)}`);
      }
      case 'punct':
        if (tok.value === '(') {
          this.pos++;
          const inner = this.nested(tok.at, () => this.or());
          this.expect(')');
          return inner;
        }
        if (tok.value === '[') {
          this.pos++;
          return this.nested(tok.at, () => {
            const items: Node[] = [];
            if (!this.isPunct(']')) {
              items.push(this.or());
              while (this.isPunct(',')) {
                this.pos++;
                items.push(this.or());
              }
            }
            this.expect(']');
            return this.node({ kind: 'list', items });
          });
        }
        return fail(tok.at, `expected an operand, found ${describeToken(tok)}`);
      case 'end':
        return fail(tok.at, 'expected an operand, found the end');
    }
  }

  private call(name: FunctionName, at: number): Node {
    this.pos++;
    if (!this.isPunct('(')) fail(this.peek().at, `expected "(" after ${name}`);
    this.pos++;
    return this.nested(at, () => {
      const args: Node[] = [];
      if (!this.isPunct(')')) {
        args.push(this.or());
        while (this.isPunct(',')) {
          this.pos++;
          args.push(this.or());
        }
      }
      this.expect(')');
      if (args.length !== ARITY[name]) {
        fail(at, `${name}() takes ${ARITY[name]} argument${ARITY[name] === 1 ? '' : 's'}, got ${args.length}`);
      }
      return this.node({ kind: 'call', name, args });
    });
  }
}

function reference(text: string, at: number): Reference {
  try {
    return parseReference(text);
  } catch (err) {
    if (err instanceof RenderError) fail(at, err.message);
    throw err;
  }
}

/** Parses a condition; throws ConditionError naming the position and what was expected. */
export function parseCondition(text: string): Condition {
  if (text.length > MAX_CONDITION_CHARS) {
    throw new ConditionError(`a condition is at most ${MAX_CONDITION_CHARS} characters`);
  }
  if (text.trim() === '') throw new ConditionError('the condition is empty');
  return { text, root: new Parser(tokenize(text)).parse() };
}

/** Every reference in the condition (the API checks that each names a step that finishes first). */
export function conditionReferences(condition: Condition): Reference[] {
  const found: Reference[] = [];
  const walk = (n: Node): void => {
    switch (n.kind) {
      case 'literal':
        return;
      case 'ref':
        found.push(n.ref);
        return;
      case 'list':
        n.items.forEach(walk);
        return;
      case 'call':
        n.args.forEach(walk);
        return;
      case 'not':
        walk(n.operand);
        return;
      case 'and':
      case 'or':
      case 'cmp':
        walk(n.left);
        walk(n.right);
        return;
    }
  };
  walk(condition.root);
  return found;
}

// --- evaluation ---------------------------------------------------------------------------------------------------

/** A value during evaluation: JSON, or a large output the workflow only holds by reference. */
type Value = JsonValue | OutputRef;

function truthy(v: Value): boolean {
  if (v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

function deepEqual(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i] as JsonValue));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const bo = b as Record<string, Value>;
  return ka.every(
    (k) =>
      Object.prototype.hasOwnProperty.call(bo, k) &&
      deepEqual((a as Record<string, Value>)[k] as Value, bo[k] as Value),
  );
}

function compare(op: Op, a: Value, b: Value): boolean {
  switch (op) {
    case '==':
      return deepEqual(a, b);
    case '!=':
      return !deepEqual(a, b);
    case 'in':
      if (Array.isArray(b)) return b.some((x) => deepEqual(a, x));
      return typeof a === 'string' && typeof b === 'string' && b.includes(a);
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const bothNumbers = typeof a === 'number' && typeof b === 'number';
      const bothStrings = typeof a === 'string' && typeof b === 'string';
      if (!bothNumbers && !bothStrings) return false;
      if (op === '<') return a < b;
      if (op === '<=') return a <= b;
      if (op === '>') return a > b;
      return a >= b;
    }
  }
}

function large(ref: Reference): ConditionError {
  return new ConditionError(`${ref.text} refers to a large output (over 64 KiB); conditions cannot read into it`);
}

/** Follows `path` into `start`; a missing segment gives null. */
function follow(start: Value, path: PathSegment[], ref: Reference): Value {
  let cur: Value = start;
  for (const seg of path) {
    if (isOutputRef(cur)) throw large(ref);
    if (typeof seg === 'number') cur = Array.isArray(cur) ? (cur[seg] ?? null) : null;
    else if (
      cur !== null &&
      typeof cur === 'object' &&
      !Array.isArray(cur) &&
      Object.prototype.hasOwnProperty.call(cur, seg)
    ) {
      cur = (cur as Record<string, JsonValue>)[seg] ?? null;
    } else cur = null;
    if (cur === null) return null;
  }
  return cur;
}

function lookup(ref: Reference, scope: ConditionScope): Value {
  switch (ref.source) {
    case 'input':
      return follow(scope.input, ref.path, ref);
    case 'steps':
    case 'step_status': {
      if (!Object.prototype.hasOwnProperty.call(scope.steps, ref.stepId)) {
        throw new ConditionError(`${ref.text}: step "${ref.stepId}" has not finished`);
      }
      const step = scope.steps[ref.stepId] as ConditionScope['steps'][string];
      return ref.source === 'step_status' ? step.status : follow(step.output, ref.path, ref);
    }
    case 'map':
      if (!scope.map) throw new ConditionError(`${ref.text}: only inside a map step`);
      return ref.field === 'index' ? scope.map.index : follow(scope.map.item, ref.path, ref);
    case 'loop':
      if (!scope.loop) throw new ConditionError(`${ref.text}: only inside a loop step`);
      return ref.field === 'iteration' ? scope.loop.iteration : follow(scope.loop.previous, ref.path, ref);
  }
}

function evaluate(n: Node, scope: ConditionScope): Value {
  switch (n.kind) {
    case 'literal':
      return n.value;
    case 'ref': {
      const v = lookup(n.ref, scope);
      if (isOutputRef(v)) throw large(n.ref);
      return v;
    }
    case 'list':
      return n.items.map((item) => evaluate(item, scope) as JsonValue);
    case 'not':
      return !truthy(evaluate(n.operand, scope));
    case 'and':
      return truthy(evaluate(n.left, scope)) && truthy(evaluate(n.right, scope));
    case 'or':
      return truthy(evaluate(n.left, scope)) || truthy(evaluate(n.right, scope));
    case 'cmp':
      return compare(n.op, evaluate(n.left, scope), evaluate(n.right, scope));
    case 'call':
      return call(n, scope);
  }
}

function call(n: Extract<Node, { kind: 'call' }>, scope: ConditionScope): Value {
  const [first, second] = n.args as [Node, Node | undefined];
  if (n.name === 'exists') {
    // The one place a large output may be named: it exists.
    const v = first.kind === 'ref' ? lookup(first.ref, scope) : evaluate(first, scope);
    return v !== null;
  }
  const a = evaluate(first, scope);
  switch (n.name) {
    case 'len':
      if (typeof a === 'string' || Array.isArray(a)) return a.length;
      return a !== null && typeof a === 'object' ? Object.keys(a).length : null;
    case 'contains':
      return compare('in', evaluate(second as Node, scope), a);
    case 'lower':
      return typeof a === 'string' ? a.toLowerCase() : null;
    case 'upper':
      return typeof a === 'string' ? a.toUpperCase() : null;
  }
}

/** Evaluates a parsed condition to a boolean; throws ConditionError when it reads what it cannot. */
export function evaluateCondition(condition: Condition, scope: ConditionScope): boolean {
  return truthy(evaluate(condition.root, scope));
}
