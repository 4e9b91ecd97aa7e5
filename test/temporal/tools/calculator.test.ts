/** The calculator tool: precedence, associativity, unary minus, errors, and properties over random input. */
import fc from 'fast-check';
import { NonRetryableError, toApplicationFailure } from '../../../temporal/failures';
import { calculatorTool } from '../../../temporal/tools/calculator';
import { evaluateArithmetic, MAX_EXPRESSION_CHARS } from '../../../temporal/tools/calc-parser';

describe('evaluateArithmetic', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 - 4 - 3', 3],
    ['100 / 10 / 5', 2],
    ['2 ^ 3 ^ 2', 512],
    ['2 ** 10', 1024],
    ['-2 ^ 2', -4],
    ['(-2) ^ 2', 4],
    ['2 ^ -1', 0.5],
    ['-3 * -3', 9],
    ['--5', 5],
    ['+4 - -4', 8],
    ['7 % 4', 3],
    ['-7 % 4', -3],
    ['1.5e3 + .5', 1500.5],
    ['0.1 + 0.2', 0.1 + 0.2],
    ['sqrt(16) + abs(-2)', 6],
    ['max(1, 5, 3) - min(4, 2)', 3],
    ['round(2.5) + floor(-1.5) + ceil(1.2)', 3 + -2 + 2],
    ['2 * pi', 2 * Math.PI],
    ['ln(e)', 1],
    ['  ( ( 42 ) )  ', 42],
    ['-0', 0],
  ])('%s = %p', (expression, expected) => {
    expect(evaluateArithmetic(expression)).toBe(expected);
  });

  it.each([
    ['1 / 0', 'division by zero'],
    ['5 % 0', 'division by zero'],
    ['1 / (2 - 2)', 'division by zero'],
    ['', 'empty'],
    ['1 +', 'unexpected the end'],
    ['(1 + 2', 'expected ")"'],
    ['1 + 2)', 'unexpected ")"'],
    ['2 3', 'unexpected "3"'],
    ['1 $ 2', 'unexpected "$"'],
    ['process.exit()', 'unexpected "."'],
    ['constructor', 'unknown name'],
    ['__proto__', 'unknown name'],
    ['toString(1)', 'unknown name'],
    ['alert(1)', 'unknown name'],
    ['sqrt(1, 2)', 'takes 1 argument'],
    ['sqrt(-1)', 'not a number'],
    ['10 ^ 400', 'too large'],
    [
      '((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))',
      'nested deeper',
    ],
  ])('refuses %p (%s)', (expression, message) => {
    let caught: unknown;
    try {
      evaluateArithmetic(expression);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(NonRetryableError);
    expect((caught as Error).message).toContain(message);
    expect(toApplicationFailure(caught)).toMatchObject({ type: 'invalid_input', nonRetryable: true });
  });

  type Tree = { n: number } | { op: '+' | '-' | '*'; l: Tree; r: Tree };
  const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
    t: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.record({ n: fc.integer({ min: -1000, max: 1000 }) }),
      fc.record({ op: fc.constantFrom('+' as const, '-' as const, '*' as const), l: tie('t'), r: tie('t') }),
    ),
  })).t;
  const render = (t: Tree): string => ('n' in t ? `(${t.n})` : `(${render(t.l)} ${t.op} ${render(t.r)})`);
  const value = (t: Tree): number => {
    if ('n' in t) return t.n;
    const [l, r] = [value(t.l), value(t.r)];
    return t.op === '+' ? l + r : t.op === '-' ? l - r : l * r;
  };

  it('agrees with the meaning of fully parenthesised integer expressions', () => {
    fc.assert(
      fc.property(tree, (t) => {
        const expected = value(t);
        fc.pre(Number.isSafeInteger(expected));
        expect(evaluateArithmetic(render(t))).toBe(expected === 0 ? 0 : expected);
      }),
    );
  });

  it('never throws anything but a NonRetryableError on arbitrary input', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'0123456789+-*/%^().,e pisqrtmax '.split('')), maxLength: 60 }),
        (s) => {
          try {
            const result = evaluateArithmetic(s);
            expect(Number.isFinite(result)).toBe(true);
          } catch (err) {
            expect(err).toBeInstanceOf(NonRetryableError);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('calculator tool', () => {
  it('validates its input and returns { result }', async () => {
    const input = calculatorTool.input.parse({ expression: '6 * 7' });
    await expect(calculatorTool.execute(input)).resolves.toEqual({ result: 42 });
    expect(calculatorTool.input.safeParse({ expression: '1', extra: true }).success).toBe(false);
  });
});

describe('R10: calculator on pathological input', () => {
  const n = MAX_EXPRESSION_CHARS;
  /** Nanoseconds for `rounds` evaluations (errors included: a refusal is an answer too). */
  function cost(expression: string, rounds = 300): number {
    const start = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) {
      try {
        evaluateArithmetic(expression);
      } catch {
        // refused: what matters is how long it took
      }
    }
    return Number(process.hrtime.bigint() - start);
  }
  /** A plain sum of the same length: the harmless baseline each attack is compared with. */
  const harmless = ('1+'.repeat(n / 2) + '1').slice(0, n - 1) + '1';

  it.each([
    ['deep nesting', '('.repeat(n / 2 - 1) + '1' + ')'.repeat(n / 2 - 1)],
    ['unclosed nesting', '('.repeat(n)],
    ['a unary chain', '-'.repeat(n - 1) + '1'],
    ['a power tower', ('9^'.repeat(n / 2) + '9').slice(-n)],
    ['a long number', '9'.repeat(n - 4) + 'e999'],
    ['huge exponents', ('1e308^1e308*'.repeat(n / 12) + '1').slice(-n)],
    ['many function arguments', ('max(' + '1,'.repeat(n)).slice(0, n - 2) + '1)'],
    ['nested functions', ('sqrt('.repeat(n / 5) + '1').slice(0, n)],
    ['a bad character at the end', '1+'.repeat(n / 2 - 1) + '1#'],
  ])('%s costs about what a same-size sum does', (_name, attack) => {
    expect(attack.length).toBeLessThanOrEqual(n);
    expect(harmless.length).toBe(n);
    cost(attack, 20); // warm both paths up before measuring
    cost(harmless, 20);
    expect(cost(attack) / cost(harmless)).toBeLessThan(10);
  });

  it('refuses input above the length bound before parsing it', () => {
    const huge = '1+'.repeat(1_000_000) + '1';
    const start = process.hrtime.bigint();
    expect(() => evaluateArithmetic(huge)).toThrow(`longer than ${n} characters`);
    const refused = Number(process.hrtime.bigint() - start);
    // Refusing 2 MB must cost less than parsing one 1 kB sum a few hundred times would.
    expect(refused / cost(harmless)).toBeLessThan(1);
  });
});
