/**
 * The JUnit XML writer: its output parses strictly and follows the JUnit schema's rules (junit-schema.ts says why
 * the check is written here rather than run by an XSD validator), failures carry the scorers' reasons, and any text —
 * control characters, lone surrogates, quotes, `]]>` — comes back from a parser as it went in (minus what XML cannot
 * carry at all). The checker itself is shown to bite on documents that break the rules.
 */
import fc from 'fast-check';
import { escapeAttribute, escapeText, junitXml, xmlSafe } from '../../../domain/evals/junit';
import type { ExperimentResults, ItemResult } from '../../../domain/evals/results';
import { childElements, junitSchemaViolations, parseXml, textOf, type XmlElement } from './junit-schema';

const now = new Date('2026-12-02T13:05:07.123Z');

function item(
  item_id: string,
  repetition: number,
  scores: [string, number, string][],
  over: Partial<ItemResult> = {},
): ItemResult {
  return {
    item_id,
    repetition,
    scores: scores.map(([name, score, reason]) => ({ name, score, pass: score >= 0.5, reason })),
    usage: { input_tokens: 100, output_tokens: 20, llm_calls: 1 },
    latency_ms: 1234,
    ...over,
  };
}

const experiment: ExperimentResults = {
  experiment_id: 'exp_01',
  name: 'gpt-4o vs mini',
  started_at: '2026-12-01T09:30:00+01:00',
  items: [
    item('q1', 0, [
      ['exact', 1, "matches 'Paris'"],
      ['judge', 0.9, 'names it'],
    ]),
    item('q1', 1, [
      ['exact', 0, "expected 'Paris', got 'paris' (case-sensitive)"],
      ['judge', 0.8, 'ok'],
    ]),
    item('q2', 0, [
      ['exact', 0, 'expected <b> & "c"'],
      ['judge', 0.2, 'vague'],
    ]),
    item('q3', 0, [['exact', 0, 'cannot score: x']], { error: 'the run failed: step fetch timed out' }),
  ],
};

function suiteOf(xml: string, index = 0): XmlElement {
  return childElements(parseXml(xml))[index]!;
}

describe('junitXml', () => {
  const xml = junitXml([experiment, { experiment_id: 'exp_02', items: [] }], { now, hostname: 'ci-runner-7' });

  it('follows the JUnit schema', () => {
    expect(junitSchemaViolations(parseXml(xml))).toEqual([]);
  });

  it('has one suite per experiment and one test case per item and repetition', () => {
    const suite = suiteOf(xml);
    expect(Object.fromEntries(suite.attributes)).toEqual({
      name: 'gpt-4o vs mini',
      package: 'stepwise.eval.gpt-4o vs mini',
      id: '0',
      timestamp: '2026-12-01T08:30:00',
      hostname: 'ci-runner-7',
      tests: '4',
      failures: '2',
      errors: '1',
      skipped: '0',
      time: '4.936',
    });
    const cases = childElements(suite).filter((c) => c.name === 'testcase');
    expect(cases.map((c) => c.attributes.get('name'))).toEqual(['q1 #0', 'q1 #1', 'q2 #0', 'q3 #0']);
    expect(cases[0]!.children).toEqual([]);
    expect(cases[0]!.attributes.get('time')).toBe('1.234');
    expect(Object.fromEntries(suiteOf(xml, 1).attributes)).toMatchObject({
      name: 'exp_02',
      id: '1',
      tests: '0',
      timestamp: '2026-12-02T13:05:07',
    });
  });

  it('fails a test case with each failed scorer and its reason; a failed run is an error', () => {
    const cases = childElements(suiteOf(xml)).filter((c) => c.name === 'testcase');
    const [failure] = childElements(cases[1]!);
    expect(failure!.name).toBe('failure');
    expect(failure!.attributes.get('message')).toBe("exact: expected 'Paris', got 'paris' (case-sensitive)");
    const [two] = childElements(cases[2]!);
    expect(two!.attributes.get('message')).toBe('failed: exact, judge');
    expect(textOf(two!)).toBe('exact (score 0): expected <b> & "c"\njudge (score 0.2): vague');
    const [error] = childElements(cases[3]!);
    expect(error!.name).toBe('error');
    expect(error!.attributes.get('type')).toBe('run_failed');
    expect(textOf(error!)).toBe('the run failed: step fetch timed out\nexact (score 0): cannot score: x');
  });

  it('carries the experiment id and each scorer’s mean and pass rate as properties', () => {
    const props = childElements(childElements(suiteOf(xml))[0]!).map((p) => [
      p.attributes.get('name'),
      p.attributes.get('value'),
    ]);
    expect(props).toEqual([
      ['experiment_id', 'exp_01'],
      ['mean.exact', '0.25'],
      ['pass_rate.exact', '0.25'],
      ['mean.judge', String((0.9 + 0.8 + 0.2) / 3)],
      ['pass_rate.judge', String(2 / 3)],
      ['tokens', '480'],
      ['model_calls', '4'],
    ]);
    expect(textOf(childElements(suiteOf(xml)).find((c) => c.name === 'system-out')!)).toBe(
      'exact: mean 0.25, 1/4 passed\njudge: mean 0.63, 2/3 passed',
    );
  });
});

describe('the schema check bites', () => {
  const good = junitXml([experiment], { now });
  const broken: [string, string, RegExp][] = [
    ['no system-err', good.replace('<system-err></system-err>', ''), /children must be/],
    [
      'an attribute on testsuites',
      good.replace('<testsuites>', '<testsuites tests="4">'),
      /attribute tests is not allowed/,
    ],
    ['a zoned timestamp', good.replace(/timestamp="[^"]*"/, 'timestamp="2026-12-01T08:30:00Z"'), /timestamp/],
    ['no id in an aggregated suite', good.replace(/ id="0"/, ''), /missing required attribute id/],
    ['two failures in a test case', good.replace('</failure>', '</failure><failure type="x"/>'), /at most one/],
    ['a failure without type', good.replace('<failure type="scorer"', '<failure'), /missing required attribute type/],
    ['a non-decimal time', good.replace('time="1.234"', 'time="1e3"'), /xs:decimal/],
  ];
  it.each(broken)('%s', (_what, xml, message) => {
    expect(xml).not.toBe(good);
    expect(junitSchemaViolations(parseXml(xml)).join('\n')).toMatch(message);
  });

  it('the parser refuses what is not well-formed', () => {
    expect(() => parseXml(good.replace("got 'paris'", 'got & paris'))).toThrow(/reference/);
    expect(() => parseXml('<a><b></a></b>')).toThrow(/mismatched/);
    expect(() => parseXml('<a x="1" x="2"/>')).toThrow(/duplicate/);
    expect(() => parseXml('<a>\u0001</a>')).toThrow(/cannot carry/);
    expect(() => parseXml('<a>]]></a>')).toThrow(/\]\]>/);
    expect(() => parseXml('<a/><b/>')).toThrow(/second root/);
    expect(() => parseXml('<a>&#0;</a>')).toThrow(/non-XML/);
  });
});

describe('escaping', () => {
  // Any UTF-16 string, lone surrogates and control characters included.
  const anyText = fc.string({ unit: 'binary', maxLength: 60 });
  const nasty = fc.oneof(anyText, fc.constantFrom(']]>', '"\'<&>', '\t\n\r', '\u0000\uFFFE\uD800', '&amp;', '  '));

  it('text and attribute values come back from a parser as they went in (minus what XML cannot carry)', () => {
    fc.assert(
      fc.property(nasty, (s) => {
        const root = parseXml(`<a v="${escapeAttribute(s)}">${escapeText(s)}</a>`);
        expect(root.attributes.get('v')).toBe(xmlSafe(s));
        expect(textOf(root)).toBe(xmlSafe(s));
      }),
      { numRuns: 500 },
    );
  });

  it('any ids, names, reasons and errors still give a document that follows the schema', () => {
    const itemArb = fc.record({
      item_id: fc.oneof(
        nasty.filter((s) => s.length > 0),
        fc.constant(' \n '),
      ),
      repetition: fc.nat(3),
      reason: nasty,
      score: fc.double({ min: 0, max: 1, noNaN: true }),
      error: fc.option(nasty, { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(itemArb, { maxLength: 5 }), nasty, nasty, (rows, name, host) => {
        const results: ExperimentResults = {
          experiment_id: 'exp',
          name,
          items: rows.map((r) => item(r.item_id, r.repetition, [['s', r.score, r.reason]], { error: r.error })),
        };
        const xml = junitXml([results], { now, hostname: host });
        const root = parseXml(xml);
        expect(junitSchemaViolations(root)).toEqual([]);
        const failures = childElements(childElements(root)[0]!)
          .filter((c) => c.name === 'testcase')
          .flatMap((c) => childElements(c))
          .filter((c) => c.name === 'failure');
        for (const f of failures)
          expect(rows.map((r) => `s: ${xmlSafe(r.reason)}`)).toContain(f.attributes.get('message'));
      }),
      { numRuns: 200 },
    );
  });
});
