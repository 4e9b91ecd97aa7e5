/** The action registry and validateActionConfig in template and run mode, with property-based checks. */
import fc from 'fast-check';
import {
  ACTION_CATALOG,
  actionConfigJsonSchema,
  actionOutputJsonSchema,
  isTemplateString,
  validateActionConfig,
} from '../../../domain/actions/catalog';
import { ACTIONS } from '../../../temporal/actions/registry';
import { ACTION_TYPES, type ActionType } from '../../../temporal/actions/types';

/** One valid, fully rendered config per action type. */
const VALID: { [K in ActionType]: Record<string, unknown> } = {
  send_email: { to: 'ada@example.com', subject: 'Hello', text: 'Hi' },
  http_request: { method: 'POST', url: 'https://api.example.com/x', body: { a: 1 }, timeout_seconds: 5 },
  transform: { expression: '$.a', data: { a: 1 } },
  delay: { seconds: 60 },
  approval: { message: 'Ship it?', timeout_seconds: 3600 },
};

const actionType = fc.constantFrom(...ACTION_TYPES);
const templateString = fc
  .tuple(fc.string({ maxLength: 5 }), fc.constantFrom('input.x', 'steps.fetch.output.body', ' input.user.email '))
  .map(([prefix, ref]) => `${prefix.replace(/[{}]/g, '')}{{${ref}}}`);

describe('ACTIONS', () => {
  it('binds exactly the action types the worker performs, each to its own declaration', () => {
    const performed = ACTION_TYPES.filter((t) => ACTION_CATALOG[t].effect !== 'workflow');
    expect(Object.keys(ACTIONS).sort()).toEqual([...performed].sort());
    for (const [type, action] of Object.entries(ACTIONS)) {
      expect(action.name).toBe(type);
      expect(action.config).toBe(ACTION_CATALOG[action.name].config);
    }
  });

  it('runs side effects as activities, transform as a pure step, and leaves delay and approval to the workflow', () => {
    expect(Object.fromEntries(ACTION_TYPES.map((t) => [t, ACTION_CATALOG[t].effect]))).toEqual({
      send_email: 'side_effect',
      http_request: 'side_effect',
      transform: 'pure',
      delay: 'workflow',
      approval: 'workflow',
    });
  });

  it.each(ACTION_TYPES)('%s publishes a strict object JSON Schema for config and a schema for output', (type) => {
    const schema = actionConfigJsonSchema(ACTION_CATALOG[type]);
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(schema.$schema).toBeUndefined();
    expect(actionOutputJsonSchema(ACTION_CATALOG[type])).toBeDefined();
  });
});

describe('validateActionConfig', () => {
  it.each(ACTION_TYPES)('%s: the valid example passes both modes', (type) => {
    expect(validateActionConfig(type, VALID[type], 'run').ok).toBe(true);
    expect(validateActionConfig(type, VALID[type], 'template')).toEqual({ ok: true, value: VALID[type] });
  });

  it('fills defaults in run mode only', () => {
    const run = validateActionConfig('http_request', { url: 'https://example.com' }, 'run');
    expect(run).toEqual({
      ok: true,
      value: { url: 'https://example.com', method: 'GET', timeout_seconds: 30, max_response_bytes: 1048576 },
    });
    expect(validateActionConfig('http_request', { url: 'https://example.com' }, 'template')).toEqual({
      ok: true,
      value: { url: 'https://example.com' },
    });
  });

  it.each([
    ['send_email', { to: 42 }, 'to'],
    ['send_email', { subject: 'line\nBcc: x@example.com' }, 'subject'],
    ['http_request', { url: 'ftp://example.com' }, 'url'],
    ['http_request', { method: 'TRACE' }, 'method'],
    ['http_request', { timeout_seconds: 0 }, 'timeout_seconds'],
    ['delay', { seconds: -1 }, 'seconds'],
    ['delay', { until: 'tomorrow' }, 'until'],
    ['approval', { message: '' }, 'message'],
    ['transform', { expression: 7 }, 'expression'],
  ] as const)('template mode still refuses a wrong literal: %s %j', (type, config, path) => {
    const r = validateActionConfig(type, config, 'template');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.path)).toContain(path);
  });

  it.each([
    ['delay', {}, 'seconds'],
    ['delay', { seconds: 1, until: '2030-01-01T00:00:00Z' }, 'seconds'],
    ['approval', {}, 'message'],
    ['send_email', { to: 'a@example.com' }, 'subject'],
    ['http_request', { method: 'GET', url: 'https://example.com', body: 'x' }, 'body'],
  ] as const)('run mode applies required fields and cross-field rules: %s %j', (type, config, path) => {
    const r = validateActionConfig(type, config, 'run');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.path)).toContain(path);
    expect(validateActionConfig(type, config, 'template').ok).toBe(true);
  });

  it('run mode refuses unrendered references in typed fields', () => {
    expect(validateActionConfig('http_request', { url: '{{input.url}}' }, 'run').ok).toBe(false);
    expect(validateActionConfig('delay', { seconds: '{{input.wait}}' }, 'run').ok).toBe(false);
  });

  it('refuses non-object configs in template mode', () => {
    expect(validateActionConfig('delay', [1], 'template')).toEqual({
      ok: false,
      issues: [{ path: '', message: 'must be an object' }],
    });
  });

  it('property: template mode accepts a {{…}} reference in place of any subset of fields', () => {
    fc.assert(
      fc.property(
        actionType,
        fc.infiniteStream(templateString),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        (type, refs, picks) => {
          const keys = Object.keys(ACTION_CATALOG[type].config.shape).filter((_k, i) => picks[i % picks.length]);
          const config = Object.fromEntries(keys.map((k) => [k, refs.next().value as string]));
          const r = validateActionConfig(type, config, 'template');
          expect(r).toEqual({ ok: true, value: config });
        },
      ),
    );
  });

  it('property: a reference is accepted inside nested values too (list items, header values)', () => {
    fc.assert(
      fc.property(templateString, templateString, (a, b) => {
        expect(validateActionConfig('send_email', { to: ['ada@example.com', a] }, 'template').ok).toBe(true);
        expect(validateActionConfig('http_request', { headers: { 'X-User': b } }, 'template').ok).toBe(true);
      }),
    );
  });

  it('property: unknown keys are refused in both modes and named in the issue', () => {
    fc.assert(
      fc.property(
        actionType,
        fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !/[.]/.test(k)),
        fc.oneof(fc.constant('{{input.x}}'), fc.integer(), fc.string()),
        fc.constantFrom('template' as const, 'run' as const),
        (type, key, value, mode) => {
          fc.pre(!Object.hasOwn(ACTION_CATALOG[type].config.shape, key) && key !== '__proto__');
          const r = validateActionConfig(type, { ...VALID[type], [key]: value }, mode);
          expect(r.ok).toBe(false);
          if (!r.ok) expect(r.issues).toContainEqual({ path: key, message: 'unknown field' });
        },
      ),
    );
  });

  it('property: validation never throws, whatever the input', () => {
    fc.assert(
      fc.property(
        actionType,
        fc.jsonValue(),
        fc.constantFrom('template' as const, 'run' as const),
        (type, value, mode) => {
          const r = validateActionConfig(type, value, mode);
          expect(typeof r.ok).toBe('boolean');
        },
      ),
    );
  });

  it('recognises reference strings', () => {
    expect(isTemplateString('Hello {{input.name}}!')).toBe(true);
    expect(isTemplateString('{{')).toBe(false);
    expect(isTemplateString('{ {input} }')).toBe(false);
    expect(isTemplateString(42)).toBe(false);
  });
});
