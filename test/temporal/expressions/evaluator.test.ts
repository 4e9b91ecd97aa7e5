/**
 * The out-of-process JSONata evaluator: RE2 regexes, size caps, and the hard time and memory limits that end an
 * evaluation JSONata itself cannot interrupt — and the pool answering the next call afterwards. R10 cases compare
 * an attack with a same-size harmless input in the same test, never an absolute time.
 */
import { NonRetryableError, RetryableError, toApplicationFailure } from '../../../temporal/failures';
import type { ExpressionEvaluator } from '../../../temporal/expressions/evaluator';
import { DEFAULT_LIMITS } from '../../../temporal/expressions/limits';
import { testEvaluator } from '../../helpers/expressions';

async function failure(p: Promise<unknown>): Promise<NonRetryableError> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NonRetryableError);
  expect(toApplicationFailure(err)).toMatchObject({ type: 'expression_error', nonRetryable: true });
  return err as NonRetryableError;
}

/** The fastest of a few runs: one slow run on a shared machine says nothing about the expression. */
async function cost(ev: ExpressionEvaluator, expression: string, runs = 3): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await ev.evaluate(expression, null);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
  }
  return best;
}

describe('expression evaluator', () => {
  let ev: ExpressionEvaluator;

  beforeAll(async () => {
    ev = testEvaluator({ limits: { ...DEFAULT_LIMITS, timeoutMs: 30_000 } });
    await ev.evaluate('1', null); // started before the first measured call
  });
  afterAll(() => ev.close());

  describe('regular expressions run on RE2', () => {
    it.each([
      ['$match("a1b22", /\\d+/).match', ['1', '22']],
      ['$match("x😀y-z", /(.)-(.)/).groups', ['y', 'z']],
      ['$match("xAy", /a/i).index', 1],
      ['$count($match("a\\nb", /^b$/m))', 1],
      ['$replace("hello world", /o/, "0")', 'hell0 w0rld'],
      ['$replace("John Smith", /(\\w+)\\s(\\w+)/, "$2, $1")', 'Smith, John'],
      ['$split("a1b22c", /\\d+/)', ['a', 'b', 'c']],
      ['$contains("abc", /B/i)', true],
      ['$match("abc", /z/)', null],
    ])('%s', async (expression, result) => {
      await expect(ev.evaluate(expression, null)).resolves.toEqual(result);
    });

    it.each(['/(a)\\1/', '/a(?=b)/', '/(?<!a)b/'])('refuses %s, which needs backtracking, clearly', async (re) => {
      const err = await failure(ev.evaluate(`$match("ab", ${re})`, null));
      expect(err.message).toContain('is not supported');
      expect(err.details).toEqual({ limit: 'regex' });
    });

    it('R10: a catastrophic regex costs about what a same-size harmless one does', async () => {
      const n = 20_000; // a backtracking engine would need ~2^n steps for the evil case
      const evil = await cost(ev, `$match($pad("", ${n}, "a") & "!", /(a+)+$/)`);
      const harmless = await cost(ev, `$match($pad("", ${n}, "b") & "!", /(a+)+$/)`);
      expect(evil / harmless).toBeLessThan(50);
    });
  });

  describe('size caps', () => {
    it.each([
      ['$pad("", 500000000)', '$pad width'],
      ['$pad("x", -500000000, "ab")', '$pad width'],
      ['$join([1..20].$pad("", 1000000, "x"))', '$join result'],
      ['$reduce([1..24], function($a, $i) { $a & $a }, "ab")', 'the result'],
      ['$reduce([1..40], function($a, $i) { $a & $a }, "ab")', 'Invalid string length'],
      ['[1..1e9]', 'sequence limit'],
    ])('R10: %s fails with a size error', async (expression, what) => {
      const err = await failure(ev.evaluate(expression, null));
      expect(err.message).toContain(what);
      expect(err.details).toEqual({ limit: 'size' });
    });

    it('a per-call limit tightens the default', async () => {
      await expect(ev.evaluate('$pad("", 100, "x")', null)).resolves.toHaveLength(100);
      const err = await failure(ev.evaluate('$pad("", 100, "x")', null, { maxStringChars: 50 }));
      expect(err.message).toContain('above the size limit (50 characters)');
    });
  });
});

describe('expression evaluator hard limits', () => {
  it('R10: a runaway JSONata cannot interrupt is killed at the time limit, and the pool answers the next call', async () => {
    const timeoutMs = 500;
    const ev = testEvaluator({ limits: { ...DEFAULT_LIMITS, timeoutMs } });
    try {
      await ev.evaluate('1', null);
      // One built-in call: RE2 finds every match of `a*b|a` by rescanning to the end, quadratic, with no JSONata
      // step in between where its own time check could run.
      const start = Date.now();
      const err = await failure(ev.evaluate('$count($match($pad("", 200000, "a"), /a*b|a/))', null));
      const elapsed = Date.now() - start;
      expect(err.message).toContain(`took longer than the time limit (${timeoutMs} ms)`);
      expect(err.details).toEqual({ limit: 'time' });
      expect(elapsed / timeoutMs).toBeLessThan(20);
      await expect(ev.evaluate('$sum([1, 2])', null)).resolves.toBe(3);
    } finally {
      await ev.close();
    }
  });

  it('R10: a memory bomb kills only its evaluator process; the worker keeps ticking and the next call works', async () => {
    const ev = testEvaluator({ memoryMb: 64 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    try {
      await ev.evaluate('1', null);
      const before = ticks;
      const err = await failure(ev.evaluate('$count([1..100000].{"a": [1..1000]})', null));
      expect(err.message).toContain('more memory than the limit (64 MB)');
      expect(err.details).toEqual({ limit: 'memory' });
      expect(ticks).toBeGreaterThan(before); // this process's event loop ran while the bomb went off elsewhere
      await expect(ev.evaluate('{"ok": true}', null)).resolves.toEqual({ ok: true });
    } finally {
      clearInterval(ticker);
      await ev.close();
    }
  });

  it('a call waits for a free evaluator only so long, then fails retryably', async () => {
    const ev = testEvaluator({ queueTimeoutMs: 3_000, limits: { ...DEFAULT_LIMITS, timeoutMs: 60_000 } });
    try {
      await ev.evaluate('1', null);
      const busy = ev.evaluate('$count($match($pad("", 200000, "a"), /a*b|a/))', null).catch((e: unknown) => e);
      const queued: unknown = await ev.evaluate('1', null).catch((e: unknown) => e);
      expect(queued).toBeInstanceOf(RetryableError);
      expect(toApplicationFailure(queued)).toMatchObject({ type: 'timeout', nonRetryable: false });
      await ev.close();
      expect(await busy).toBeInstanceOf(RetryableError); // closed under it: not the expression's fault
      await expect(ev.evaluate('1', null)).rejects.toBeInstanceOf(RetryableError);
    } finally {
      await ev.close();
    }
  });
});
