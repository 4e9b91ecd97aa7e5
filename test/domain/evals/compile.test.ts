/**
 * Scorers are checked when an experiment is created (issue #47 item 8): every problem comes back with the path of
 * the field and a message that says what is wrong, and a list that compiles keeps what it compiled.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { compileScorers, jsonataProblem } from '../../../domain/evals/compile';
import { scorerListSchema } from '../../../domain/evals/declarations';
import { parseFieldPath, selectField, formatFieldPath } from '../../../domain/evals/field-path';

function errorsOf(input: unknown) {
  const result = compileScorers(input);
  if (result.ok) throw new Error('expected the list to be refused');
  return result.errors;
}

describe('compileScorers', () => {
  it('compiles a list of every kind and applies the defaults', () => {
    const result = compileScorers([
      { kind: 'exact', path: 'answer.city' },
      { kind: 'contains', value: ['Paris', 'France'] },
      { kind: 'regex', pattern: '^\\d{4}-\\d{2}$' },
      { kind: 'json_schema', schema: { type: 'object', required: ['city'] } },
      { kind: 'jsonata', expression: 'output.city = expected.city' },
      { kind: 'trajectory', expected: [{ name: 'search' }] },
      { kind: 'cost', max_tokens: 1000 },
      { kind: 'latency', max_ms: 5000 },
      { kind: 'llm_judge', rubric: 'Is it polite?', model: 'openai:gpt-4o-mini' },
    ]);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.scorers.map((s) => s.name)).toEqual([
      'exact',
      'contains',
      'regex',
      'json_schema',
      'jsonata',
      'trajectory',
      'cost',
      'latency',
      'llm_judge',
    ]);
    const exact = result.scorers[0]!;
    expect(exact.kind === 'exact' && exact.path).toEqual(['answer', 'city']);
    expect(exact.config).toMatchObject({ ignore_case: false, whitespace: 'trim' });
    expect(result.scorers[5]!.config).toMatchObject({
      match: 'ordered',
      arguments_match: 'partial',
      pass_threshold: 1,
    });
    expect(result.scorers[8]!.config).toMatchObject({ pass_threshold: 0.5 });
  });

  it('compiles the example list of docs/evals.md', () => {
    const doc = fs.readFileSync(path.join(__dirname, '../../../docs/evals.md'), 'utf8');
    const example = /## Scorers[\s\S]*?```json\n([\s\S]*?)\n```/.exec(doc);
    const result = compileScorers(JSON.parse(example![1]!));
    expect(result.ok ? result.scorers.map((s) => s.kind) : result.errors).toHaveLength(9);
    expect(result.ok).toBe(true);
  });

  it('publishes the list as JSON Schema (what the API document will carry), one variant per kind', () => {
    const schema = z.toJSONSchema(scorerListSchema, { io: 'input' }) as {
      items: { oneOf?: unknown[]; anyOf?: unknown[] };
    };
    expect((schema.items.oneOf ?? schema.items.anyOf)!).toHaveLength(9);
  });

  it('derives unique names from the kind, around the names given', () => {
    const result = compileScorers([
      { kind: 'exact' },
      { kind: 'exact', name: 'exact_2' },
      { kind: 'exact' },
      { kind: 'latency', max_ms: 1 },
    ]);
    expect(result.ok && result.scorers.map((s) => s.name)).toEqual(['exact', 'exact_2', 'exact_3', 'latency']);
  });

  it('refuses duplicate names, naming the second', () => {
    expect(
      errorsOf([
        { kind: 'exact', name: 'city' },
        { kind: 'contains', name: 'city', value: 'x' },
      ]),
    ).toEqual([{ path: 'scorers[1].name', message: 'duplicate scorer name "city"' }]);
  });

  it('refuses a pattern RE2 cannot run, with the pattern and why', () => {
    const [error] = errorsOf([{ kind: 'exact' }, { kind: 'regex', pattern: '(a)\\1' }]);
    expect(error!.path).toBe('scorers[1].pattern');
    expect(error!.message).toMatch(/does not compile on RE2.*invalid escape sequence: `\\1`/);
    expect(errorsOf([{ kind: 'regex', pattern: '(?=a)b' }])[0]!.message).toMatch(/RE2/);
    expect(errorsOf([{ kind: 'regex', pattern: '(abc' }])[0]!.message).toMatch(/missing closing \)/);
  });

  it('refuses a JSONata syntax error with its message, position and code', () => {
    const [error] = errorsOf([{ kind: 'jsonata', expression: '$count(output' }]);
    expect(error).toEqual({
      path: 'scorers[0].expression',
      message: 'JSONata syntax error at character 13: Expected ")" before end of expression [S0203]',
    });
    expect(jsonataProblem('output.score >')).toMatch(/^JSONata syntax error at character 14: .*\[S0207\]$/);
  });

  it('refuses pathological JSONata quickly and with a message, not a crash', () => {
    // Whether 10 000 levels overflow the parser's stack depends on the process's stack size; 100 000 always do.
    expect(jsonataProblem('('.repeat(100_000))).toBe(
      'JSONata syntax error: the expression is nested too deeply to parse',
    );
    expect(jsonataProblem('('.repeat(10_000))).toMatch(/^JSONata syntax error/);
    // Nested quantifiers are fine for RE2 (linear time), so the literal is accepted.
    expect(jsonataProblem(`$match(output, /${'(a+)+'.repeat(50)}$/)`)).toBeUndefined();
  });

  it('refuses a JSONata regex literal RE2 cannot run, before any item is scored', () => {
    expect(jsonataProblem('$match(output, /(a)\\1/)')).toMatch(/regular expression \/\(a\)\\1\/ is not supported/);
    expect(jsonataProblem('$contains(output, /pa+ris/i)')).toBeUndefined();
  });

  it('refuses an invalid JSON Schema with the compiler’s reason', () => {
    const errors = errorsOf([
      { kind: 'json_schema', schema: { type: 'string', pattern: '(?<=x)' } },
      { kind: 'json_schema', schema: { type: 'nonsense' } },
      { kind: 'json_schema', schema: { $ref: 'https://elsewhere.example/schema' } },
    ]);
    expect(errors.map((e) => e.path)).toEqual(['scorers[0].schema', 'scorers[1].schema', 'scorers[2].schema']);
    expect(errors[0]!.message).toMatch(/^not a valid JSON Schema \(.*backtracking/);
    expect(errors[1]!.message).toMatch(/^not a valid JSON Schema \(.*type/);
    expect(errors[2]!.message).toMatch(/must point inside this schema/);
  });

  it('refuses a field path that does not parse, saying where', () => {
    expect(errorsOf([{ kind: 'exact', path: 'answer..city' }])).toEqual([
      { path: 'scorers[0].path', message: 'not a field path (expected a field name after "." at 7)' },
    ]);
  });

  it('reports schema problems with their paths: unknown kind, unknown field, missing field, bad model', () => {
    expect(errorsOf([{ kind: 'bleu' }])[0]!.path).toBe('scorers[0].kind');
    expect(errorsOf([{ kind: 'exact', nope: 1 }])[0]!.message).toMatch(/nope/);
    expect(errorsOf([{ kind: 'regex' }])[0]!.path).toBe('scorers[0].pattern');
    expect(errorsOf([{ kind: 'llm_judge', rubric: 'x', model: 'gpt 4' }])[0]).toMatchObject({
      path: 'scorers[0].model',
      message: expect.stringMatching(/provider:model/),
    });
    expect(errorsOf([{ kind: 'cost' }])[0]!.message).toMatch(/at least one of max_tokens/);
    expect(errorsOf([])[0]!.path).toBe('scorers');
  });

  it('returns every problem of the list at once', () => {
    const errors = errorsOf([
      { kind: 'regex', name: 'a', pattern: '(?!x)' },
      { kind: 'jsonata', name: 'a', expression: '(' },
    ]);
    expect(errors.map((e) => e.path).sort()).toEqual([
      'scorers[0].pattern',
      'scorers[1].expression',
      'scorers[1].name',
    ]);
  });
});

describe('field paths', () => {
  it('parses the forms a scorer may write and selects with them', () => {
    const value = { answer: { city: 'Paris', 'odd key': [1, { x: true }] } };
    for (const [text, path, selected] of [
      ['$', [], value],
      ['answer.city', ['answer', 'city'], 'Paris'],
      ['$.answer["odd key"][1].x', ['answer', 'odd key', 1, 'x'], true],
      ["$['answer'].city", ['answer', 'city'], 'Paris'],
    ] as const) {
      const parsed = parseFieldPath(text);
      expect(parsed).toEqual({ ok: true, path });
      expect(selectField(value, [...path])).toEqual({ found: true, value: selected });
    }
    expect(selectField(value, ['answer', 'country'])).toEqual({ found: false, missing: '$.answer.country' });
    expect(selectField(value, ['answer', 0])).toEqual({ found: false, missing: '$.answer[0]' });
    expect(formatFieldPath(['answer', 'odd key', 1])).toBe('$.answer["odd key"][1]');
  });

  it('refuses what it does not know, with the position', () => {
    expect(parseFieldPath('a[x]')).toEqual({ ok: false, message: expect.stringMatching(/at 2$/) });
    expect(parseFieldPath('a b')).toEqual({ ok: false, message: 'unexpected " " at 1' });
    expect(parseFieldPath('.a').ok).toBe(false);
  });
});
