/** transform action: JSONata over earlier outputs; the output is the result itself. */
import { validateActionConfig } from '../../../domain/actions/catalog';
import { ACTIONS } from '../../../temporal/actions/registry';
import { NonRetryableError, toApplicationFailure } from '../../../temporal/failures';
import { actionContext } from '../../helpers/effects-context';
import { testEvaluator } from '../../helpers/expressions';

const action = ACTIONS.transform;
const expressions = testEvaluator();
const ctx = actionContext({}, { expressions });
afterAll(() => expressions.close());

function runConfig(config: Record<string, unknown>) {
  const checked = validateActionConfig('transform', config, 'run');
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  return checked.value;
}

describe('transform action', () => {
  const fetched = {
    status: 200,
    body: {
      users: [
        { name: 'Ada', admin: true },
        { name: 'Alan', admin: false },
      ],
    },
  };

  it('shapes an earlier output', async () => {
    await expect(
      action.execute(
        runConfig({ expression: '{"admins": body.users[admin].name, "total": $count(body.users)}', data: fetched }),
        ctx,
      ),
    ).resolves.toEqual({ admins: 'Ada', total: 2 });
  });

  it('works without data and returns null when nothing is selected', async () => {
    await expect(action.execute(runConfig({ expression: '1 + 2' }), ctx)).resolves.toBe(3);
    await expect(action.execute(runConfig({ expression: 'missing.field', data: fetched }), ctx)).resolves.toBeNull();
  });

  it('a bad expression fails the step without retries', async () => {
    const err: unknown = await action.execute(runConfig({ expression: '$$$(' }), ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonRetryableError);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'expression_error', nonRetryable: true });
  });

  it('requires an expression in run mode only', () => {
    expect(validateActionConfig('transform', { data: 1 }, 'run').ok).toBe(false);
    expect(validateActionConfig('transform', { data: '{{steps.a.output}}' }, 'template').ok).toBe(true);
  });
});
