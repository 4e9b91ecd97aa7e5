/**
 * JUnit XML from experiment results (issue #47 item 6), so CI systems show an eval like a test run: one `testsuite`
 * per experiment, one `testcase` per item × repetition, a `failure` naming each failed scorer with its reason, an
 * `error` when the item's run itself failed, and the experiment id and scorer means as `properties`.
 *
 * The shape follows the strictest schema in common use (the Apache Ant JUnit schema as published by Windy Road, which
 * Jenkins' and GitLab's readers accept): a bare `<testsuites>` root; on each suite `id` and `package` and the required
 * counters, a timestamp without time zone, `properties`, `system-out` and `system-err` present even when empty; at
 * most one `failure` or `error` per test case. Pure: the caller passes the clock and the host name.
 */
import { fmt } from './result';
import type { ExperimentResults, ItemResult } from './results';
import { mean } from './stats';

export interface JunitOptions {
  /** The suite's `timestamp` when the results carry no `started_at`. */
  now: Date;
  /** Where the eval ran; `localhost` when unknown (as the schema asks). */
  hostname?: string;
}

/**
 * Characters XML 1.0 cannot carry at all, not even as a character reference: controls other than tab, newline and
 * carriage return, lone surrogates, U+FFFE and U+FFFF. They become U+FFFD, so one odd byte in a model's output never
 * makes the whole report unreadable.
 */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** `text` as XML can carry it (see NOT_XML). */
export function xmlSafe(text: string): string {
  return text.replace(NOT_XML, '\uFFFD');
}

/** Escapes element content. `>` too, so that `]]>` cannot appear. */
export function escapeText(text: string): string {
  return xmlSafe(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Escapes an attribute value (in double quotes). Tab, newline and carriage return become character references:
 * a parser turns literal ones into spaces (attribute-value normalisation), references survive.
 */
export function escapeAttribute(text: string): string {
  return escapeText(text)
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;');
}

function attrs(pairs: [string, string | number][]): string {
  return pairs.map(([k, v]) => ` ${k}="${escapeAttribute(String(v))}"`).join('');
}

/** Seconds with millisecond precision, as `xs:decimal` wants them (no exponent). */
function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

/** `2026-12-02T13:05:00` in UTC: the schema's pattern allows no zone and no fraction. */
function timestamp(iso: string | undefined, now: Date): string {
  const parsed = iso === undefined ? Number.NaN : Date.parse(iso);
  const at = Number.isNaN(parsed) ? now : new Date(parsed);
  return at.toISOString().slice(0, 19);
}

/** A name that is a non-empty `xs:token` once whitespace collapses. */
function tokenName(text: string, fallback: string): string {
  const collapsed = xmlSafe(text).replace(/\s+/g, ' ').trim();
  return collapsed === '' ? fallback : collapsed;
}

function testcase(item: ItemResult, classname: string): { xml: string; failed: boolean; errored: boolean } {
  const name = tokenName(`${item.item_id} #${item.repetition}`, `item #${item.repetition}`);
  const open = `    <testcase${attrs([
    ['name', name],
    ['classname', classname],
    ['time', seconds(item.latency_ms)],
  ])}`;
  const failed = item.scores.filter((s) => !s.pass);
  const details = failed.map((s) => `${s.name} (score ${fmt(s.score)}): ${s.reason}`).join('\n');
  if (item.error !== undefined) {
    const body = details ? `${item.error}\n${details}` : item.error;
    const error = `<error${attrs([
      ['type', 'run_failed'],
      ['message', item.error],
    ])}>${escapeText(body)}</error>`;
    return { xml: `${open}>\n      ${error}\n    </testcase>`, failed: false, errored: true };
  }
  if (failed.length === 0) return { xml: `${open}/>`, failed: false, errored: false };
  const message =
    failed.length === 1
      ? `${failed[0]!.name}: ${failed[0]!.reason}`
      : `failed: ${failed.map((s) => s.name).join(', ')}`;
  const failure = `<failure${attrs([
    ['type', 'scorer'],
    ['message', message],
  ])}>${escapeText(details)}</failure>`;
  return { xml: `${open}>\n      ${failure}\n    </testcase>`, failed: true, errored: false };
}

function testsuite(results: ExperimentResults, index: number, options: JunitOptions): string {
  const suiteName = tokenName(results.name ?? results.experiment_id, results.experiment_id);
  const classname = tokenName(`stepwise.eval.${suiteName}`, 'stepwise.eval');
  const items = [...results.items].sort((a, b) =>
    a.item_id === b.item_id ? a.repetition - b.repetition : a.item_id < b.item_id ? -1 : 1,
  );
  const cases = items.map((item) => testcase(item, classname));
  const byScorer = new Map<string, { scores: number[]; passed: number }>();
  for (const item of items) {
    for (const s of item.scores) {
      const entry = byScorer.get(s.name) ?? { scores: [], passed: 0 };
      entry.scores.push(s.score);
      if (s.pass) entry.passed += 1;
      byScorer.set(s.name, entry);
    }
  }
  const properties: [string, string][] = [
    ['experiment_id', results.experiment_id],
    ...[...byScorer.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .flatMap(([name, e]): [string, string][] => [
        [`mean.${name}`, String(mean(e.scores))],
        [`pass_rate.${name}`, String(e.passed / e.scores.length)],
      ]),
    ['tokens', String(items.reduce((n, i) => n + i.usage.input_tokens + i.usage.output_tokens, 0))],
    ['model_calls', String(items.reduce((n, i) => n + i.usage.llm_calls, 0))],
  ];
  const summary = [...byScorer.entries()]
    .map(([name, e]) => `${name}: mean ${fmt(mean(e.scores))}, ${e.passed}/${e.scores.length} passed`)
    .join('\n');
  const head = `  <testsuite${attrs([
    ['name', suiteName],
    ['package', classname],
    ['id', index],
    ['timestamp', timestamp(results.started_at, options.now)],
    ['hostname', tokenName(options.hostname ?? 'localhost', 'localhost')],
    ['tests', cases.length],
    ['failures', cases.filter((c) => c.failed).length],
    ['errors', cases.filter((c) => c.errored).length],
    ['skipped', 0],
    ['time', seconds(items.reduce((t, i) => t + i.latency_ms, 0))],
  ])}>`;
  const props = properties.map(
    ([name, value]) =>
      `      <property${attrs([
        ['name', name],
        ['value', value],
      ])}/>`,
  );
  return [
    head,
    props.length > 0 ? `    <properties>\n${props.join('\n')}\n    </properties>` : '    <properties/>',
    ...cases.map((c) => c.xml),
    `    <system-out>${escapeText(summary)}</system-out>`,
    '    <system-err></system-err>',
    '  </testsuite>',
  ].join('\n');
}

/** The JUnit XML document for `experiments` (one suite each, in the order given). */
export function junitXml(experiments: ExperimentResults[], options: JunitOptions): string {
  const suites = experiments.map((e, i) => testsuite(e, i, options));
  return ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuites>', ...suites, '</testsuites>', ''].join('\n');
}
