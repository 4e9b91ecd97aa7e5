/**
 * Datasets through the real API and database: create, list, read, rename and delete; another user's dataset is a 404
 * on every route; every item change makes a version and every earlier version reads exactly as it was; JSONL export
 * and import round-trip, a bad line is named by its number and writes nothing; an input the workflow's input_schema
 * refuses is refused naming the item and the schema's message. Every response is checked against the OpenAPI document.
 */
import type { Response } from 'supertest';
import { expectError } from '../helpers/api';
import { openApiChecker } from '../helpers/openapi';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow } from '../helpers/workflows';
import { datasetItemsCollection } from '../../db/dataset-items';

interface Dataset {
  id: string;
  name: string;
  description: string | null;
  workflow_id: string | null;
  version: number;
  item_count: number;
}
interface Item {
  id: string;
  input: Record<string, unknown>;
  expected: unknown;
  metadata: Record<string, unknown>;
  source_run_id: string | null;
  added_in: number;
  removed_in: number | null;
}
interface Change {
  dataset_id: string;
  version: number;
  item_count: number;
  added: number;
  items: Item[];
}

describe('datasets', () => {
  let api: TestApi;
  let user: TestUser;
  let other: TestUser;
  const oas = openApiChecker();

  beforeAll(async () => {
    api = await startTestApi(testConfig({ BODY_LIMIT_BYTES: String(1024 * 1024) }));
    user = await createTestUser(api.database.db);
    other = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  /** A request as `who`, its answer checked against the document. */
  const call = async (
    method: 'get' | 'post' | 'patch' | 'delete',
    path: string,
    body?: object,
    who: TestUser = user,
  ): Promise<Response> => {
    const req = api.http[method](`/api/v1${path}`).set(who.auth);
    const res = body === undefined ? await req : await req.send(body);
    oas.check(res);
    return res;
  };
  const data = <T>(res: Response, status = 200): T => {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
    return (res.body as { data: T }).data;
  };
  const create = async (body: object = {}) =>
    data<Dataset>(await call('post', '/datasets', { name: uniqueId('set-'), ...body }), 201);
  const itemsAt = async (id: string, version?: number) =>
    data<Item[]>(
      await call('get', `/datasets/${id}/items?limit=200${version === undefined ? '' : `&version=${version}`}`),
    );

  it('creates, lists, reads, renames and deletes a dataset; names are unique per owner', async () => {
    const ds = await create({ description: 'golden answers' });
    expect(ds).toMatchObject({ description: 'golden answers', workflow_id: null, version: 0, item_count: 0 });
    const listed = data<Dataset[]>(await call('get', '/datasets'));
    expect(listed.map((d) => d.id)).toContain(ds.id);
    expect(data<Dataset>(await call('get', `/datasets/${ds.id}`))).toEqual(ds);

    expectError(await call('post', '/datasets', { name: ds.name }), 409, 'already exists');
    // Another user may use the same name.
    data(await call('post', '/datasets', { name: ds.name }, other), 201);

    const renamed = data<Dataset>(
      await call('patch', `/datasets/${ds.id}`, { name: `${ds.name}-2`, description: null }),
    );
    expect(renamed).toMatchObject({ name: `${ds.name}-2`, description: null, version: 0 });
    expectError(await call('patch', `/datasets/${ds.id}`, {}), 400, 'at least one field');

    data(await call('post', `/datasets/${ds.id}/items`, { items: [{ input: { q: 1 } }] }), 201);
    expect(data(await call('delete', `/datasets/${ds.id}`))).toEqual({ id: ds.id, deleted: true });
    expectError(await call('get', `/datasets/${ds.id}`), 404, ds.id);
    // Its items and versions went with it.
    expect(await datasetItemsCollection(api.database.db).countDocuments({ dataset_id: ds.id })).toBe(0);
    expect(await api.database.db.collection('dataset_versions').countDocuments({ dataset_id: ds.id })).toBe(0);
  });

  it("answers 404 for another user's dataset on every route, and changes nothing", async () => {
    const ds = await create();
    const added = data<Change>(await call('post', `/datasets/${ds.id}/items`, { items: [{ input: { a: 1 } }] }), 201);
    const item = added.items[0]!.id;
    const attempts: [method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object][] = [
      ['get', `/datasets/${ds.id}`],
      ['patch', `/datasets/${ds.id}`, { name: 'mine' }],
      ['delete', `/datasets/${ds.id}`],
      ['get', `/datasets/${ds.id}/versions`],
      ['get', `/datasets/${ds.id}/items`],
      ['post', `/datasets/${ds.id}/items`, { items: [{ input: {} }] }],
      ['post', `/datasets/${ds.id}/items/import`, { jsonl: '{"input":{}}' }],
      ['post', `/datasets/${ds.id}/items/from-runs`, { run_ids: ['run_whatever0000'] }],
      ['get', `/datasets/${ds.id}/items/export`],
      ['get', `/datasets/${ds.id}/items/${item}`],
      ['patch', `/datasets/${ds.id}/items/${item}`, { input: { a: 2 } }],
      ['delete', `/datasets/${ds.id}/items/${item}`],
    ];
    for (const [method, path, body] of attempts) expectError(await call(method, path, body, other), 404, ds.id);
    expect(data<Dataset[]>(await call('get', '/datasets', undefined, other)).map((d) => d.id)).not.toContain(ds.id);
    expect(data<Dataset>(await call('get', `/datasets/${ds.id}`))).toMatchObject({ version: 1, item_count: 1 });
  });

  it('makes a version per change; every earlier version reads exactly as it was', async () => {
    const ds = await create();
    const v1 = data<Change>(
      await call('post', `/datasets/${ds.id}/items`, {
        items: [
          { input: { q: 'one' }, expected: 'uno', metadata: { lang: 'es' } },
          { input: { q: 'two' }, expected: 'dos' },
          { input: { q: 'three' } },
        ],
      }),
      201,
    );
    expect(v1).toMatchObject({ version: 1, item_count: 3, added: 3 });
    const [one, two, three] = v1.items.map((i) => i.id) as [string, string, string];
    const before = await itemsAt(ds.id, 1);
    expect(before.map((i) => [i.input, i.expected, i.metadata])).toEqual([
      [{ q: 'one' }, 'uno', { lang: 'es' }],
      [{ q: 'two' }, 'dos', {}],
      [{ q: 'three' }, null, {}],
    ]);

    const v2 = data<Change>(
      await call('patch', `/datasets/${ds.id}/items/${two}`, { expected: 'DOS', metadata: { x: 1 } }),
    );
    expect(v2).toMatchObject({ version: 2, item_count: 3 });
    expect(v2.items[0]).toMatchObject({
      id: two,
      input: { q: 'two' },
      expected: 'DOS',
      metadata: { x: 1 },
      added_in: 2,
    });
    const v3 = data<Change>(await call('delete', `/datasets/${ds.id}/items/${one}`));
    expect(v3).toMatchObject({ version: 3, item_count: 2 });
    const v4 = data<Change>(await call('post', `/datasets/${ds.id}/items`, { items: [{ input: { q: 'four' } }] }), 201);
    expect(v4).toMatchObject({ version: 4, item_count: 3 });
    const v5 = data<Change>(
      await call('patch', `/datasets/${ds.id}/items/${three}`, { expected: null, input: { q: 3 } }),
    );
    expect(v5.version).toBe(5);

    // Version 1 is what it was, item for item, field for field (only removed_in tells a later version changed it).
    const strip = (items: Item[]) => items.map(({ removed_in: _, ...rest }) => rest);
    expect(strip(await itemsAt(ds.id, 1))).toEqual(strip(before));
    expect((await itemsAt(ds.id, 1)).map((i) => i.removed_in)).toEqual([3, 2, 5]);
    expect((await itemsAt(ds.id, 2)).map((i) => [i.id, i.expected])).toEqual([
      [one, 'uno'],
      [two, 'DOS'],
      [three, null],
    ]);
    expect((await itemsAt(ds.id, 3)).map((i) => i.id)).toEqual([two, three]);
    const latest = await itemsAt(ds.id);
    expect(latest.map((i) => i.input)).toEqual([{ q: 'two' }, { q: 3 }, { q: 'four' }]);
    expect(latest.map((i) => i.removed_in)).toEqual([null, null, null]);
    expect(await itemsAt(ds.id, 0)).toEqual([]);

    // One item in an old version; a version not made yet is a 404.
    expect(data<Item>(await call('get', `/datasets/${ds.id}/items/${two}?version=1`)).expected).toBe('dos');
    expectError(await call('get', `/datasets/${ds.id}/items/${one}`), 404, one);
    expectError(await call('get', `/datasets/${ds.id}/items?version=6`), 404, 'no version 6');
    expectError(await call('patch', `/datasets/${ds.id}/items/${one}`, { input: {} }), 404, one);

    const versions = data<{ version: number; change: string; item_count: number }[]>(
      await call('get', `/datasets/${ds.id}/versions`),
    );
    expect(versions.map((v) => [v.version, v.change, v.item_count])).toEqual([
      [5, 'item_updated', 3],
      [4, 'items_added', 3],
      [3, 'items_removed', 2],
      [2, 'item_updated', 3],
      [1, 'items_added', 3],
      [0, 'created', 0],
    ]);
    expect(data<Dataset>(await call('get', `/datasets/${ds.id}`))).toMatchObject({ version: 5, item_count: 3 });
  });

  it('pages the items of a version with the Link header', async () => {
    const ds = await create();
    const items = Array.from({ length: 7 }, (_, i) => ({ input: { n: i } }));
    data(await call('post', `/datasets/${ds.id}/items`, { items }), 201);
    const seen: unknown[] = [];
    let next: string | undefined = `/api/v1/datasets/${ds.id}/items?limit=3&version=1`;
    while (next) {
      const res: Response = await api.http.get(next).set(user.auth);
      oas.check(res);
      seen.push(...data<Item[]>(res).map((i) => i.input.n));
      const link: string | undefined = res.headers.link;
      next = link
        ? new URL(link.slice(1, link.indexOf('>'))).pathname + new URL(link.slice(1, link.indexOf('>'))).search
        : undefined;
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('exports a version as JSONL and imports it back as the same items', async () => {
    const ds = await create();
    data(
      await call('post', `/datasets/${ds.id}/items`, {
        items: [
          { input: { q: 'a', nested: { list: [1, 2] } }, expected: { answer: 'A' }, metadata: { tag: 'x' } },
          { input: { q: 'b' }, source_run_id: 'run_recorded00000' },
        ],
      }),
      201,
    );
    data(await call('post', `/datasets/${ds.id}/items`, { items: [{ input: { q: 'c' } }] }), 201);
    const res = await call('get', `/datasets/${ds.id}/items/export?version=1`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(res.headers['x-dataset-version']).toBe('1');
    const text = res.text;
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([
      { input: { q: 'a', nested: { list: [1, 2] } }, expected: { answer: 'A' }, metadata: { tag: 'x' } },
      { input: { q: 'b' }, metadata: {}, source_run_id: 'run_recorded00000' },
    ]);

    const copy = await create();
    const imported = data<Change>(await call('post', `/datasets/${copy.id}/items/import`, { jsonl: text }), 201);
    expect(imported).toMatchObject({ version: 1, item_count: 2, added: 2 });
    const again = await call('get', `/datasets/${copy.id}/items/export`);
    expect(again.text).toBe(text);
  });

  it('refuses a JSONL text with a bad line, naming its number, and writes nothing', async () => {
    const ds = await create();
    const lines = ['{"input": {"q": 1}}', '', '{"input": {"q": 2}}', '{"input": {"q": 3}, "expectd": 1}'];
    expectError(
      await call('post', `/datasets/${ds.id}/items/import`, { jsonl: lines.join('\n') }),
      400,
      'line 4',
      'expectd',
    );
    const broken = ['{"input": {"q": 1}}', '{"input": {"q": 2}'].join('\n');
    expectError(await call('post', `/datasets/${ds.id}/items/import`, { jsonl: broken }), 400, 'line 2', 'not JSON');
    expectError(
      await call('post', `/datasets/${ds.id}/items/import`, { jsonl: '{"input": {"$where": 1}}' }),
      400,
      'line 1',
    );
    expectError(await call('post', `/datasets/${ds.id}/items/import`, { jsonl: '\n\n' }), 400, 'no items');
    expect(data<Dataset>(await call('get', `/datasets/${ds.id}`))).toMatchObject({ version: 0, item_count: 0 });
    expect(await datasetItemsCollection(api.database.db).countDocuments({ dataset_id: ds.id })).toBe(0);
  });

  it("refuses an input the workflow's input_schema refuses, naming the item and the schema's message", async () => {
    const tpl = await actionTemplates(api.database.db, user.id);
    const workflowId = await createWorkflow(api, user, {
      name: uniqueId('typed'),
      config: {
        input_schema: {
          type: 'object',
          required: ['email'],
          properties: { email: { type: 'string' }, n: { type: 'integer' } },
        },
      },
      steps: [{ id: 'echo', template_id: tpl.transform._id, config: { expression: '$', data: '{{input.email}}' } }],
    });
    expectError(await call('post', '/datasets', { name: uniqueId('x'), workflow_id: 'wf_unknown00000' }), 404);
    const ds = await create({ workflow_id: workflowId });
    expect(ds.workflow_id).toBe(workflowId);

    const body = { items: [{ input: { email: 'a@example.com' } }, { input: { n: 1 } }] };
    expectError(
      await call('post', `/datasets/${ds.id}/items`, body),
      400,
      'items[1]',
      workflowId,
      'input.email: required',
    );
    const jsonl = '{"input": {"email": "a@example.com"}}\n{"input": {"email": "b@example.com", "n": "two"}}';
    expectError(await call('post', `/datasets/${ds.id}/items/import`, { jsonl }), 400, 'line 2', 'input.n');
    expect(data<Dataset>(await call('get', `/datasets/${ds.id}`))).toMatchObject({ version: 0, item_count: 0 });

    const ok = data<Change>(
      await call('post', `/datasets/${ds.id}/items`, { items: [{ input: { email: 'a@x.org' } }] }),
      201,
    );
    const item = ok.items[0]!.id;
    expectError(
      await call('patch', `/datasets/${ds.id}/items/${item}`, { input: { n: 2 } }),
      400,
      `item ${item}`,
      'input.email',
    );
    expect(data<Dataset>(await call('get', `/datasets/${ds.id}`))).toMatchObject({ version: 1, item_count: 1 });
  });

  it('bounds an item and a change', async () => {
    const ds = await create();
    // The body limit of this file's API is raised (beforeAll) so that the item bound is what refuses.
    const big = { input: { a: 'x'.repeat(300 * 1024) } };
    expectError(await call('post', `/datasets/${ds.id}/items`, { items: [big] }), 400, 'items[0]', 'at most 256 KiB');
    const many = { items: Array.from({ length: 1001 }, () => ({ input: {} })) };
    expectError(await call('post', `/datasets/${ds.id}/items`, many), 400, 'items', 'max 1000');
    expect(data<Dataset>(await call('get', `/datasets/${ds.id}`))).toMatchObject({ version: 0, item_count: 0 });
  });
});
