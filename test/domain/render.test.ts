/** The pure rendering of `{{input…}}` / `{{steps.<id>.output…}}` references that the run workflow uses. */
import fc from 'fast-check';
import { collectReferences, parseReference, render, RenderError } from '../../domain/render';

const ctx = {
  input: { name: 'Ada', n: 3, tags: ['a', 'b'], nested: { 'odd key': true } },
  steps: {
    fetch: { status: 200, body: { items: [{ id: 7 }] } },
    big: { stepwise_blob: 'blob_x', bytes: 100_000 },
  },
};

describe('render', () => {
  it('keeps the type of a whole-string reference', () => {
    expect(render('{{input.n}}', ctx)).toBe(3);
    expect(render('{{ steps.fetch.output.body.items[0] }}', ctx)).toEqual({ id: 7 });
    expect(render('{{input.nested["odd key"]}}', ctx)).toBe(true);
    expect(render({ list: ['{{input.tags}}'] }, ctx)).toEqual({ list: [['a', 'b']] });
  });

  it('interpolates references inside text (JSON for objects)', () => {
    expect(render('Hi {{input.name}}, n={{input.n}}, tags={{input.tags}}', ctx)).toBe('Hi Ada, n=3, tags=["a","b"]');
  });

  it('fails on a missing reference instead of rendering an empty string', () => {
    expect(() => render('x{{input.missing}}y', ctx)).toThrow(RenderError);
    expect(() => render('{{steps.fetch.output.body.items[3]}}', ctx)).toThrow(/items\[3\] is missing/);
    expect(() => render('{{steps.later.output}}', ctx)).toThrow(/step "later" has no output yet/);
  });

  it('defers a path into a large output to the activity, and refuses it inside text', () => {
    expect(render('{{steps.big.output.a[1]}}', ctx)).toEqual({
      stepwise_blob: 'blob_x',
      bytes: 100_000,
      path: ['a', 1],
    });
    expect(() => render('see {{steps.big.output}}', ctx)).toThrow(/large output/);
  });

  it('leaves strings without references untouched (any string)', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes('{{')),
        (s) => render(s, ctx) === s,
      ),
    );
  });
});

describe('parseReference and collectReferences', () => {
  it('parses input and step references', () => {
    expect(parseReference('input.a[2].b')).toMatchObject({ source: 'input', path: ['a', 2, 'b'] });
    expect(parseReference('steps.s1.output.x')).toMatchObject({ source: 'steps', stepId: 's1', path: ['x'] });
  });

  it('refuses unknown sources and malformed paths', () => {
    expect(() => parseReference('env.SECRET')).toThrow(/unknown source "env"/);
    expect(() => parseReference('steps.s1.result')).toThrow(/steps.<id>.output/);
    expect(() => parseReference('input..a')).toThrow(/cannot parse/);
  });

  it('reports where each reference is', () => {
    const refs = collectReferences({ to: '{{input.email}}', parts: ['x', 'y {{steps.a.output.z}}'] }, 'config');
    expect(refs.map((r) => [r.at, r.ref.text])).toEqual([
      ['config.to', '{{input.email}}'],
      ['config.parts[1]', '{{steps.a.output.z}}'],
    ]);
  });
});
