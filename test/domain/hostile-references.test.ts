/**
 * R10 (references): the `{{…}}` scanner and parser run in the API on every workflow write and in the workflow on every
 * render. A string built to make a backtracking scanner work hard must cost about what a harmless string of the same
 * size costs; size caps turn oversized references and renders into clear errors.
 */
import {
  collectReferences,
  MAX_REFERENCE_CHARS,
  MAX_RENDERED_STRING_CHARS,
  parseReference,
  render,
  RenderError,
} from '../../domain/render';
import { scanReferences } from '../../domain/reference-scan';
import { costRatio } from '../helpers/cost-ratio';

const N = 400_000;
/**
 * How much more an attack may cost than harmless text of its size: a linear scanner does a few times more work per
 * `{{` than per plain character, and a busy machine adds noise; a backtracking one costs thousands of times more at
 * this size (the old pattern: 2 s for 2 500 characters).
 */
const AT_MOST = 50;

describe('R10: hostile reference strings', () => {
  it('an unclosed "{{" followed by many spaces costs what plain text of the same size costs', async () => {
    // The old pattern took about 2 s for 2 500 spaces, growing with the cube of the length.
    const attack = `{{${' '.repeat(N)}`;
    const harmless = `ab${' '.repeat(N)}`;
    expect(attack).toHaveLength(harmless.length);
    expect(
      await costRatio(
        () => collectReferences({ attack }),
        () => collectReferences({ harmless }),
      ),
    ).toBeLessThan(AT_MOST);
    const ctx = { input: {}, steps: {} };
    expect(
      await costRatio(
        () => render(attack, ctx),
        () => render(harmless, ctx),
      ),
    ).toBeLessThan(AT_MOST);
  });

  it('many openings without a close cost linear time as well', async () => {
    const attack = '{{ {{ '.repeat(N / 6);
    const harmless = 'ab cd '.repeat(N / 6);
    expect(
      await costRatio(
        () => scanReferences(attack),
        () => scanReferences(harmless),
      ),
    ).toBeLessThan(AT_MOST);
  });

  it('finds the same references as the rule says: {{ text without braces }}', () => {
    expect(scanReferences('a {{ input.x }} b {{{input.y}} {{x}y}} {{input.z}}').map((m) => m.expr)).toEqual([
      'input.x',
      'input.y',
      'input.z',
    ]);
    expect(scanReferences('{{input.a}}{{input.b}}').map((m) => [m.start, m.end])).toEqual([
      [0, 11],
      [11, 22],
    ]);
    expect(render('{{input.a}}{{input.b}}', { input: { a: 1, b: 'x' }, steps: {} })).toBe('1x');
  });

  it('refuses a reference longer than the cap, and a path with too many segments', () => {
    const long = `input${'.a'.repeat(MAX_REFERENCE_CHARS)}`;
    expect(() => parseReference(long)).toThrow(/at most 1024 characters/);
    const many = `input${'[0]'.repeat(100)}`;
    expect(() => parseReference(many)).toThrow(/at most 64 path segments/);
    // The message quotes an excerpt, never the whole hostile string.
    try {
      parseReference(long);
    } catch (err) {
      expect((err as Error).message.length).toBeLessThan(200);
    }
  });

  it('caps text built by interpolation: a short template cannot render megabytes', () => {
    const big = 'x'.repeat(10_000);
    const template = '{{input.big}}'.repeat(100); // 1.3 KB of template, 1 MB rendered
    expect(() => render(template, { input: { big }, steps: {} })).toThrow(RenderError);
    expect(() => render(template, { input: { big }, steps: {} })).toThrow(
      new RegExp(`exceed ${MAX_RENDERED_STRING_CHARS}`),
    );
    expect(render('{{input.big}}'.repeat(10), { input: { big }, steps: {} })).toHaveLength(100_000);
  });

  it('treats a reference-like object inside an output as data, not as a stored output', () => {
    const ctx = {
      input: {},
      steps: { t: { inner: { stepwise_blob: 'blob_of_someone_else', bytes: 10 } } },
    };
    // Walked like any value: the path continues into it instead of being deferred to a blob read.
    expect(render('{{steps.t.output.inner.stepwise_blob}}', ctx)).toBe('blob_of_someone_else');
    expect(render('{{steps.t.output.inner}}', ctx)).toEqual({ stepwise_blob: 'blob_of_someone_else', bytes: 10 });
  });
});
