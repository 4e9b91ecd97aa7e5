/**
 * R10 (JSON Schema): user schemas are compiled so that no schema and no value can make validation super-linear —
 * patterns run on RE2, uniqueItems is linear, $refs are local and their expansion bounded — and the ordinary
 * `$` keywords (`$schema`, `$defs`, `$ref`, `$anchor`, `$comment`) work.
 */
import { createOutputChecker } from '../../temporal/activities/agent/final-answer';
import type { JsonObject } from '../../domain/json';
import { costRatio } from '../helpers/cost-ratio';
import { compileUserSchema, MAX_EXPANDED_NODES, userSchemaProblems, UserSchemaError } from '../../domain/user-schema';

describe('R10: user JSON Schemas', () => {
  it('a nested-quantifier pattern costs what a plain one costs (RE2, no backtracking)', async () => {
    const evil = compileUserSchema({ type: 'string', pattern: '^(a+)+$' });
    const plain = compileUserSchema({ type: 'string', pattern: '^[a-z!]+$' });
    // With the backtracking engine, 30 characters already take seconds; this is 100 000.
    const attack = `${'a'.repeat(100_000)}!`;
    expect(evil(attack)).toBe(false);
    expect(evil('aaaa')).toBe(true);
    expect(
      await costRatio(
        () => evil(attack),
        () => plain(attack),
      ),
    ).toBeLessThan(10);
  });

  it('patternProperties run on RE2 as well', async () => {
    const evil = compileUserSchema({ type: 'object', patternProperties: { '^(a|a)*$': { type: 'number' } } });
    const plain = compileUserSchema({ type: 'object', patternProperties: { '^[a]*$': { type: 'number' } } });
    const value = { [`${'a'.repeat(50_000)}!`]: 'x' };
    expect(evil(value)).toBe(true);
    expect(evil({ aaa: 'x' })).toBe(false);
    expect(
      await costRatio(
        () => evil(value),
        () => plain(value),
      ),
    ).toBeLessThan(10);
  });

  it('patterns that need backtracking are refused when the schema is checked, naming where', () => {
    expect(userSchemaProblems({ properties: { a: { type: 'string', pattern: '(a)\\1' } } })).toEqual([
      expect.stringMatching(/^\(root\)\.properties\.a\.pattern: .*cannot run without backtracking/),
    ]);
    expect(userSchemaProblems({ type: 'string', pattern: '(?<=a)b' })[0]).toMatch(/backtracking/);
    expect(() => compileUserSchema({ type: 'string', pattern: '(?=a)' })).toThrow(UserSchemaError);
  });

  it('uniqueItems over tens of thousands of untyped items costs linear time, and still finds duplicates', async () => {
    const unique = compileUserSchema({ type: 'array', uniqueItems: true });
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i, tags: ['x', String(i)] }));
    const small = items(10_000);
    const large = items(40_000);
    expect(unique(large)).toBe(true);
    // Key order does not make two equal objects different.
    expect(
      unique([
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ]),
    ).toBe(false);
    expect(unique([1, '1'])).toBe(true);
    // Four times the items: about four times the time when linear; sixteen with Ajv's pairwise comparison (whose
    // 40 000 untyped items take seconds).
    expect(
      await costRatio(
        () => unique(large),
        () => unique(small),
      ),
    ).toBeLessThan(8);
  });

  it('accepts $schema, $defs, $ref, $anchor and $comment, and enforces them', () => {
    const schema: JsonObject = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://example.com/order',
      $comment: 'an order',
      $defs: { sku: { $anchor: 'sku', type: 'string', pattern: '^[A-Z]{3}-\\d+$' } },
      type: 'object',
      properties: { sku: { $ref: '#/$defs/sku' }, alt: { $ref: '#sku' } },
      required: ['sku'],
    };
    expect(userSchemaProblems(schema)).toEqual([]);
    const validate = compileUserSchema(schema);
    expect(validate({ sku: 'ABC-12', alt: 'XYZ-1' })).toBe(true);
    expect(validate({ sku: 'abc' })).toBe(false);
    expect(validate({ sku: 'ABC-1', alt: 'nope' })).toBe(false);
    // Two users' schemas may share an $id: each compiles on its own.
    expect(() => compileUserSchema(schema)).not.toThrow();
  });

  it('refuses other dialects, remote and dangling $refs, recursion and exponential expansion', () => {
    expect(userSchemaProblems({ $schema: 'http://json-schema.org/draft-04/schema#' })[0]).toMatch(/2020-12/);
    expect(userSchemaProblems({ $ref: 'http://127.0.0.1:9/latest/meta-data' })[0]).toMatch(/must point inside/);
    expect(userSchemaProblems({ $ref: '#/$defs/missing' })[0]).toMatch(/must point inside/);
    const recursive: JsonObject = {
      $defs: { node: { anyOf: [{ type: 'array', items: { $ref: '#/$defs/node' } }, { type: 'string' }] } },
      $ref: '#/$defs/node',
    };
    expect(userSchemaProblems(recursive)[0]).toMatch(/recursive \$ref/);
    expect(userSchemaProblems({ items: { $ref: '#' } })[0]).toMatch(/recursive/);
    // Each level refers to the next twice: 2^20 subschemas once expanded.
    const defs: Record<string, JsonObject> = { l20: { type: 'string' } };
    for (let i = 19; i >= 0; i--)
      defs[`l${i}`] = { allOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
    const fanOut = { $defs: defs, $ref: '#/$defs/l0' };
    expect(userSchemaProblems(fanOut)[0]).toMatch(new RegExp(`more than ${MAX_EXPANDED_NODES} subschemas`));
  });

  it('a recursive $ref cannot hide behind a twin $anchor or a nested $id (Ajv scopes both per resource)', () => {
    // Ajv resolves "#a" to the recursive root anchor; a checker keeping the last "a" saw a harmless string schema and
    // let through a schema that costs 2^depth (about 3 s at depth 24, minutes at the 32 levels a body may have).
    const recursive: JsonObject = {
      anyOf: [{ type: 'array', items: { $ref: '#a' } }, { type: 'array', items: { $ref: '#a' } }, { type: 'string' }],
    };
    const twinAnchor: JsonObject = {
      $defs: {
        r: { ...recursive, $anchor: 'a' },
        z: { $id: 'https://example.invalid/other', $anchor: 'a', type: 'string' },
      },
      properties: { v: { $ref: '#a' } },
    };
    expect(() => compileUserSchema(twinAnchor)).toThrow(UserSchemaError);
    expect(userSchemaProblems(twinAnchor).join('; ')).toMatch(/only the root schema may have a \$id|defined twice/);
    expect(userSchemaProblems({ $defs: { p: { $anchor: 'a' }, q: { $anchor: 'a' } } })[0]).toMatch(/defined twice/);
    // A nested $id makes "#/$defs/x" mean that resource's $defs for Ajv, the root's for a root-based checker.
    const nestedId: JsonObject = {
      $defs: { x: { type: 'string' } },
      properties: { v: { $id: 'https://example.invalid/inner', $defs: { x: recursive }, $ref: '#/$defs/x' } },
    };
    expect(userSchemaProblems(nestedId)[0]).toMatch(/^\(root\)\.properties\.v\.\$id: only the root/);
    // Data is not schema: "$id" and "$anchor" inside const/enum, or a property named "$id", are fine.
    expect(
      userSchemaProblems({
        $id: 'https://example.invalid/root',
        properties: { $id: { const: { $id: 'x', $anchor: 'a' } }, b: { enum: [{ $anchor: 'a' }] } },
      }),
    ).toEqual([]);
  });

  it("the agent's final answer is checked with the same compiler", async () => {
    const checker = createOutputChecker();
    const schema = {
      $defs: { word: { type: 'string', pattern: '^(a+)+$' } },
      type: 'object',
      properties: { w: { $ref: '#/$defs/word' } },
    };
    expect(checker.check('{"w":"aaa"}', schema)).toEqual({ ok: true, output: { w: 'aaa' } });
    const hostile = JSON.stringify({ w: `${'a'.repeat(100_000)}!` });
    expect(checker.check(hostile, schema)).toMatchObject({ ok: false });
    const plainSchema = { type: 'object', properties: { w: { type: 'string', pattern: '^[ab]+$' } } };
    expect(
      await costRatio(
        () => checker.check(hostile, schema),
        () => checker.check(hostile, plainSchema),
      ),
    ).toBeLessThan(10);
    expect(() => checker.check('{}', { type: 'string', pattern: '(a)\\1' })).toThrow(
      /not a valid JSON Schema|output_schema/,
    );
  });
});
