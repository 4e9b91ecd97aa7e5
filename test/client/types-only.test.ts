/**
 * The generated client keeps the shapes of the document and leaves out the rules TypeScript cannot state: a step's
 * "exactly one of template, template_id and workflow_id" would otherwise make every step `unknown` in the client.
 */
import { typesOnly } from '../../client/types-only';

it('drops not and assertion-only anyOf/oneOf, keeps unions of typed members', () => {
  const step = {
    type: 'object',
    properties: { template: { type: 'string' }, workflow_id: { type: 'string' } },
    anyOf: [{ required: ['template'] }, { required: ['workflow_id'] }],
    not: { required: ['workflow_id', 'template'] },
  };
  const value = { anyOf: [{ type: 'string' }, { type: 'null' }] };
  const spec = { oneOf: [{ required: ['cron'] }, { required: ['interval'] }], type: 'object' };
  expect(typesOnly({ step, value, spec })).toEqual({
    step: { type: 'object', properties: step.properties },
    value,
    spec: { type: 'object' },
  });
});
