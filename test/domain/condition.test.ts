/** The condition language of workflow graphs (domain/condition.ts): parsing, semantics, limits. */
import {
  ConditionError,
  conditionReferences,
  evaluateCondition,
  MAX_CONDITION_CHARS,
  MAX_CONDITION_DEPTH,
  parseCondition,
  type ConditionScope,
} from '../../domain/condition';

const scope: ConditionScope = {
  input: { dry_run: false, n: 3, tags: ['a', 'b'], user: { name: 'Ada' }, 'key with space': 1 },
  steps: {
    classify: { status: 'completed', output: { category: 'billing', score: 0.9 } },
    call: { status: 'completed', output: { status: 201, body: { items: [] } } },
    search: { status: 'completed', output: { items: [1, 2] } },
    fetch: { status: 'failed', output: { error: { reason: 'non_retryable', message: 'x' } } },
    review: { status: 'completed', output: { verdict: 'ok' } },
    skipped: { status: 'skipped', output: null },
    big: { status: 'completed', output: { stepwise_blob: 'blob_x', bytes: 100_000 } },
  },
};

const run = (text: string, s: ConditionScope = scope) => evaluateCondition(parseCondition(text), s);

describe('conditions', () => {
  it.each([
    ['steps.classify.output.category == "billing"', true],
    ['steps.call.output.status < 400', true],
    ['len(steps.search.output.items) > 0', true],
    ['len(steps.call.output.body.items) > 0', false],
    ['steps.fetch.status == "failed" || exists(steps.fetch.output.error)', true],
    ['steps.review.output.verdict in ["approve", "ok"] && !(input.dry_run == true)', true],
    ["{{steps.classify.output.category}} != 'tech'", true],
    ['input["key with space"] == 1', true],
    ['input.tags[1] == "b"', true],
    ['"a" in input.tags', true],
    ['"Ad" in input.user.name', true],
    ['contains(input.tags, "c")', false],
    ['lower(input.user.name) == "ada"', true],
    ['upper(1) == null', true],
    ['input.missing.deep == null', true],
    ['exists(input.missing)', false],
    ['steps.skipped.status == "skipped" && steps.skipped.output == null', true],
    ['input.n >= 3 && input.n <= 3 && !(input.n > 3) && !(input.n < 3)', true],
    ['"b" > "a"', true],
    ['1 < "2"', false],
    ['input.user == input.user', true],
    ['[1, [2]] == [1, [2]]', true],
    ['0 || "" || [] || null', false],
    ['input.tags', true],
    ['-1.5e2 < 0', true],
    ['exists(steps.big.output)', true],
  ])('%s → %s', (text, expected) => {
    expect(run(text)).toBe(expected);
  });

  it('compares objects regardless of key order', () => {
    const s: ConditionScope = { input: { a: { x: 1, y: [1, 2] }, b: { y: [1, 2], x: 1 } }, steps: {} };
    expect(run('input.a == input.b', s)).toBe(true);
  });

  it('map and loop references read their scope, and are errors outside it', () => {
    const inMap: ConditionScope = {
      ...scope,
      map: { item: { vip: true }, index: 2 },
      loop: { iteration: 3, previous: null },
    };
    expect(run('map.item.vip && map.index == 2 && loop.iteration == 3 && loop.previous == null', inMap)).toBe(true);
    expect(() => run('map.index == 0')).toThrow(/only inside a map step/);
    expect(() => run('loop.iteration == 1')).toThrow(/only inside a loop step/);
  });

  it('refuses to read into a large output, and a step that has not finished', () => {
    expect(() => run('steps.big.output.x == 1')).toThrow(/large output/);
    expect(() => run('steps.big.output == null')).toThrow(/large output/);
    expect(() => run('steps.later.output == 1')).toThrow(/has not finished/);
  });

  it.each([
    ['', /empty/],
    ['steps.a.output ==', /at 17: expected an operand, found the end/],
    ['(input.a', /expected "\)"/],
    ['input.a == 1 2', /expected an operator or the end/],
    ['len(input.a, 2)', /len\(\) takes 1 argument/],
    ['foo(1)', /expected "\(" after|unknown source/],
    ['"open', /unterminated string/],
    ['input.a = 1', /unexpected character|expected/],
    ['steps.a.outputs.x == 1', /expected steps.<id>.output/],
    ['nope.x == 1', /unknown source/],
    ['1 @ 2', /unexpected character "@"/],
  ])('a malformed condition %j is a ConditionError naming the problem', (text, message) => {
    expect(() => parseCondition(text)).toThrow(ConditionError);
    expect(() => parseCondition(text)).toThrow(message);
  });

  it('lists its references', () => {
    const refs = conditionReferences(parseCondition('steps.a.output.x == input.y || steps.b.status == "failed"'));
    expect(refs.map((r) => r.source)).toEqual(['steps', 'input', 'step_status']);
  });

  it('bounds size and nesting', () => {
    expect(() => parseCondition('1 == 1 || '.repeat(300))).toThrow(/at most/);
    expect(() => parseCondition('x'.repeat(MAX_CONDITION_CHARS + 1))).toThrow(/at most 2000 characters/);
    expect(() =>
      parseCondition(`${'('.repeat(MAX_CONDITION_DEPTH + 1)}1${')'.repeat(MAX_CONDITION_DEPTH + 1)}`),
    ).toThrow(/nests at most/);
    expect(() => parseCondition('!'.repeat(500) + 'true')).toThrow(/nests at most/);
    // Adversarial inputs of the maximum size parse (or fail) at once: one pass, no backtracking.
    expect(() => parseCondition('{{' + ' '.repeat(MAX_CONDITION_CHARS - 2))).toThrow(ConditionError);
    expect(() => parseCondition('input' + '.a'.repeat(900))).toThrow(/path segments|at most/);
    expect(() => parseCondition('"' + '\\\\'.repeat(900))).toThrow(/unterminated/);
  });
});
