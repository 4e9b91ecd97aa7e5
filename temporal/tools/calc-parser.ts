/**
 * Safe arithmetic for the calculator tool: a tokenizer and a recursive-descent evaluator (no eval, no Function).
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '+') unary | power
 *   power   := primary (('^' | '**') unary)?        right-associative; -2^2 = -(2^2) as in mathematics
 *   primary := number | constant | name '(' expr (',' expr)* ')' | '(' expr ')'
 *
 * Every failure (syntax, division by zero, a non-finite result) is NonRetryableError('invalid_input').
 *
 * Cost is linear in the input: one pass to tokenize (sticky regexes without nested quantifiers), one pass to parse
 * with nesting capped at MAX_DEPTH (so no stack overflow), `^` is one Math call however large the exponent, and
 * the input itself is capped, whoever the caller is.
 */
import { MAX_EXPRESSION_CHARS } from '../../domain/tools/calculator';
import { NonRetryableError } from '../failures';

type Token =
  | { kind: 'num'; value: number; pos: number }
  | { kind: 'name'; value: string; pos: number }
  | { kind: 'op'; value: string; pos: number }
  | { kind: 'end'; pos: number };

const MAX_DEPTH = 64;
/** Longest expression accepted: the bound the tool's schema publishes to the model. */
export { MAX_EXPRESSION_CHARS };

// Maps, not object literals: a name like `constructor` must not find Object.prototype members.
const CONSTANTS: ReadonlyMap<string, number> = new Map([
  ['pi', Math.PI],
  ['e', Math.E],
]);

interface MathFunction {
  arity: [number, number];
  fn: (...a: number[]) => number;
}
const FUNCTIONS: ReadonlyMap<string, MathFunction> = new Map<string, MathFunction>([
  ['sqrt', { arity: [1, 1], fn: Math.sqrt }],
  ['abs', { arity: [1, 1], fn: Math.abs }],
  ['floor', { arity: [1, 1], fn: Math.floor }],
  ['ceil', { arity: [1, 1], fn: Math.ceil }],
  ['round', { arity: [1, 1], fn: Math.round }],
  ['ln', { arity: [1, 1], fn: Math.log }],
  ['log10', { arity: [1, 1], fn: Math.log10 }],
  ['exp', { arity: [1, 1], fn: Math.exp }],
  ['min', { arity: [1, 50], fn: Math.min }],
  ['max', { arity: [1, 50], fn: Math.max }],
]);

function fail(message: string): never {
  throw new NonRetryableError('invalid_input', `expression: ${message}`);
}

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  const number = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
  const name = /[A-Za-z_][A-Za-z0-9_]*/y;
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    number.lastIndex = i;
    const num = number.exec(src);
    if (num) {
      tokens.push({ kind: 'num', value: Number(num[0]), pos: i });
      i += num[0].length;
      continue;
    }
    name.lastIndex = i;
    const id = name.exec(src);
    if (id) {
      tokens.push({ kind: 'name', value: id[0].toLowerCase(), pos: i });
      i += id[0].length;
      continue;
    }
    if (src.startsWith('**', i)) {
      tokens.push({ kind: 'op', value: '^', pos: i });
      i += 2;
      continue;
    }
    if ('+-*/%^(),'.includes(ch)) {
      tokens.push({ kind: 'op', value: ch, pos: i });
      i++;
      continue;
    }
    fail(`unexpected "${ch}" at position ${i + 1}`);
  }
  tokens.push({ kind: 'end', pos: src.length });
  return tokens;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    const value = this.expr();
    const rest = this.peek();
    if (rest.kind !== 'end') fail(`unexpected ${this.show(rest)} at position ${rest.pos + 1}`);
    return value;
  }

  private peek(): Token {
    return this.tokens[this.index] as Token;
  }

  private next(): Token {
    return this.tokens[this.index++] as Token;
  }

  private isOp(value: string): boolean {
    const t = this.peek();
    return t.kind === 'op' && t.value === value;
  }

  private expect(value: string): void {
    const t = this.next();
    if (t.kind !== 'op' || t.value !== value)
      fail(`expected "${value}" at position ${t.pos + 1}, found ${this.show(t)}`);
  }

  private show(t: Token): string {
    return t.kind === 'end' ? 'the end' : `"${String(t.value)}"`;
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH} levels`);
  }

  private expr(): number {
    let value = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.next();
      const rhs = this.term();
      value = op.kind === 'op' && op.value === '+' ? value + rhs : value - rhs;
    }
    return value;
  }

  private term(): number {
    let value = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const op = this.next() as Token & { kind: 'op' };
      const rhs = this.unary();
      if (op.value === '*') value *= rhs;
      else if (rhs === 0) fail(`division by zero at position ${op.pos + 1}`);
      else value = op.value === '/' ? value / rhs : value % rhs;
    }
    return value;
  }

  private unary(): number {
    if (this.isOp('-') || this.isOp('+')) {
      const op = this.next() as Token & { kind: 'op' };
      this.enter();
      const value = this.unary();
      this.depth--;
      return op.value === '-' ? -value : value;
    }
    return this.power();
  }

  private power(): number {
    const base = this.primary();
    if (!this.isOp('^')) return base;
    this.next();
    this.enter();
    const exponent = this.unary();
    this.depth--;
    return base ** exponent;
  }

  private primary(): number {
    const t = this.next();
    if (t.kind === 'num') return t.value;
    if (t.kind === 'op' && t.value === '(') {
      this.enter();
      const value = this.expr();
      this.depth--;
      this.expect(')');
      return value;
    }
    if (t.kind === 'name') {
      const constant = CONSTANTS.get(t.value);
      if (constant !== undefined && !this.isOp('(')) return constant;
      const fn = FUNCTIONS.get(t.value);
      if (!fn) fail(`unknown name "${t.value}" at position ${t.pos + 1}`);
      this.expect('(');
      this.enter();
      const args = [this.expr()];
      while (this.isOp(',')) {
        this.next();
        args.push(this.expr());
      }
      this.depth--;
      this.expect(')');
      const [lo, hi] = fn.arity;
      if (args.length < lo || args.length > hi)
        fail(`${t.value}() takes ${lo === hi ? lo : `${lo} to ${hi}`} argument(s)`);
      return fn.fn(...args);
    }
    fail(`unexpected ${this.show(t)} at position ${t.pos + 1}`);
  }
}

/** Evaluates an arithmetic expression; the result is a finite number or a NonRetryableError. */
export function evaluateArithmetic(expression: string): number {
  if (expression.length > MAX_EXPRESSION_CHARS) fail(`longer than ${MAX_EXPRESSION_CHARS} characters`);
  if (expression.trim() === '') fail('empty');
  const value = new Parser(tokenize(expression)).parse();
  if (Number.isNaN(value)) fail('the result is not a number');
  if (!Number.isFinite(value)) fail('the result is too large');
  // -0 is an artefact of IEEE arithmetic, not an answer anyone expects.
  return value === 0 ? 0 : value;
}
