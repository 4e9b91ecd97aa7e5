/** json_transform: JSONata over given data; bad expressions are non-retryable, runaway ones are stopped. */
import { NonRetryableError, toApplicationFailure } from '../../../temporal/failures';
import { jsonTransformTool } from '../../../temporal/tools/json-transform';
import { toolContext } from '../../helpers/effects-context';
import { testEvaluator } from '../../helpers/expressions';

const data = {
  items: [
    { name: 'pen', price: 2, qty: 10 },
    { name: 'book', price: 15, qty: 1 },
    { name: 'lamp', price: 40, qty: 2 },
  ],
};

const expressions = testEvaluator();
afterAll(() => expressions.close());

async function run(expression: string, input: unknown = data) {
  return jsonTransformTool.execute(
    jsonTransformTool.input.parse({ expression, data: input }),
    toolContext({}, { expressions }),
  );
}

describe('json_transform', () => {
  it.each([
    ['items[price > 10].name', ['book', 'lamp']],
    ['$sum(items.(price * qty))', 20 + 15 + 80],
    ['{"count": $count(items), "names": $join(items.name, ", ")}', { count: 3, names: 'pen, book, lamp' }],
    ['items[0]', { name: 'pen', price: 2, qty: 10 }],
  ])('%s', async (expression, result) => {
    await expect(run(expression)).resolves.toEqual({ result });
  });

  it('returns null when nothing matches', async () => {
    await expect(run('items[price > 1000].name')).resolves.toEqual({ result: null });
  });

  it('returns plain JSON (functions dropped)', async () => {
    await expect(run('{"f": function($x){$x}, "n": 1}')).resolves.toEqual({ result: { n: 1 } });
  });

  it.each([
    ['items[', 'expression'],
    ['$unknownFunction(1)', 'expression'],
    ['"a" + 1', 'expression'],
  ])('a bad expression %p fails without retries', async (expression) => {
    const err: unknown = await run(expression).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonRetryableError);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'expression_error', nonRetryable: true });
  });

  it('stops runaway recursion', async () => {
    const err: unknown = await run('($f := function($n){ $f($n + 1) }; $f(0))').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonRetryableError);
    expect((err as NonRetryableError).code).toBe('expression_error');
  });

  it('refuses unknown input fields', () => {
    expect(jsonTransformTool.input.safeParse({ expression: '$', data: 1, other: 1 }).success).toBe(false);
  });
});
