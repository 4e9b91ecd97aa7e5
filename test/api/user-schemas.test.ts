/**
 * JSON Schemas through the API: the `$` keywords users paste from elsewhere are accepted inside schemas (and only
 * there), stored without becoming MongoDB field names, returned exactly as written and enforced; a pathological
 * pattern cannot stall a run start (R10).
 */
import { costRatio } from '../helpers/cost-ratio';
import { startTestApi, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow } from '../helpers/workflows';

const ORDER_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $comment: 'pasted from a schema registry',
  $defs: { sku: { type: 'string', pattern: '^[A-Z]{3}-\\d+$' }, 'odd.name': { type: 'integer', minimum: 1 } },
  type: 'object',
  properties: { sku: { $ref: '#/$defs/sku' }, qty: { $ref: '#/$defs/odd.name' }, '~weird': { type: 'string' } },
  required: ['sku'],
};

describe('user schemas through the API', () => {
  let api: TestApi;
  let user: TestUser;
  let transformId: string;
  beforeAll(async () => {
    api = await startTestApi();
    user = await createTestUser(api.database.db);
    transformId = (await actionTemplates(api.database.db, user.id)).transform._id;
  });
  afterAll(() => api?.close());

  const workflowWith = (inputSchema: object) =>
    createWorkflow(api, user, {
      name: 'schema',
      steps: [{ id: 's', template_id: transformId, config: { expression: '1' } }],
      config: { input_schema: inputSchema },
    } as never);

  it('accepts $schema, $defs and $ref in input_schema, returns it as written and enforces it at run start', async () => {
    const id = await workflowWith(ORDER_SCHEMA);
    const got = await api.http.get(`/api/v1/workflows/${id}`).set(user.auth);
    expect(got.body.data.config.input_schema).toEqual(ORDER_SCHEMA);
    // Stored with escaped keys: no `$` or `.` key reaches MongoDB as a field name.
    const raw = JSON.stringify(await api.database.db.collection('workflows').findOne({ _id: id as never }));
    expect(raw).not.toMatch(/"\$(schema|defs|ref|comment)"/);
    expect(raw).not.toContain('"odd.name"');

    const bad = await api.http
      .post(`/api/v1/workflows/${id}/run`)
      .set(user.auth)
      .send({ input: { sku: 'abc' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/input\.sku: must match pattern/);
    const badQty = await api.http
      .post(`/api/v1/workflows/${id}/run`)
      .set(user.auth)
      .send({ input: { sku: 'ABC-1', qty: 0 } });
    expect(badQty.status).toBe(400);
    expect(badQty.body.error).toMatch(/input\.qty/);
    const ok = await api.http
      .post(`/api/v1/workflows/${id}/run`)
      .set(user.auth)
      .send({ input: { sku: 'ABC-1', qty: 2 } });
    expect(ok.status).toBe(202);
    // The list shows the same schema.
    const list = await api.http.get('/api/v1/workflows').set(user.auth);
    expect(list.body.data.find((w: { id: string }) => w.id === id).config.input_schema).toEqual(ORDER_SCHEMA);
  });

  it("accepts $defs in a template's and a step's output_schema, returned as written", async () => {
    const created = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send({ name: 'typed', default_prompt: 'Answer.', output_schema: ORDER_SCHEMA });
    expect(created.status).toBe(201);
    expect(created.body.data.output_schema).toEqual(ORDER_SCHEMA);
    const read = await api.http.get(`/api/v1/agents/${created.body.data.id}`).set(user.auth);
    expect(read.body.data.output_schema).toEqual(ORDER_SCHEMA);
    const patched = await api.http
      .patch(`/api/v1/agents/${created.body.data.id}`)
      .set(user.auth)
      .send({ output_schema: { ...ORDER_SCHEMA, $comment: 'v2' } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.output_schema.$comment).toBe('v2');

    const wf = await createWorkflow(api, user, {
      name: 'step schema',
      steps: [{ id: 'ask', template_id: created.body.data.id, output_schema: ORDER_SCHEMA }],
    });
    const got = await api.http.get(`/api/v1/workflows/${wf}`).set(user.auth);
    expect(got.body.data.steps[0].output_schema).toEqual(ORDER_SCHEMA);
  });

  it('still refuses $ keys and the reserved stepwise_blob key outside schemas', async () => {
    const res = await api.http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({ name: 'x', steps: [{ id: 's', template_id: transformId, config: { expression: '1', $where: 'x' } }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/steps\[0\]\.config\.\$where: keys may not start with "\$"/);
    const id = await workflowWith({ type: 'object' });
    const forged = await api.http
      .post(`/api/v1/workflows/${id}/run`)
      .set(user.auth)
      .send({ input: { x: { stepwise_blob: 'blob_abc', bytes: 1 } } });
    expect(forged.status).toBe(400);
    expect(forged.body.error).toMatch(/input\.x\.stepwise_blob: the key stepwise_blob is reserved/);
  });

  it('refuses schemas that could not run in linear time, naming the field', async () => {
    const res = await api.http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({
        name: 'x',
        steps: [{ id: 's', template_id: transformId, config: { expression: '1' } }],
        config: { input_schema: { type: 'object', properties: { a: { type: 'string', pattern: '(a)\\1' } } } },
      });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/config\.input_schema: .*backtracking/);
    const remote = await api.http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({
        name: 'x',
        steps: [{ id: 's', template_id: transformId, config: { expression: '1' } }],
        config: { input_schema: { $ref: 'http://127.0.0.1:9/latest/meta-data' } },
      });
    expect(remote.status).toBe(400);
    expect(remote.body.error).toMatch(/config\.input_schema: .*must point inside/);
  });

  it('R10: a run start against a nested-quantifier pattern costs what a plain pattern costs', async () => {
    const evil = await workflowWith({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
    const plain = await workflowWith({ type: 'object', properties: { s: { type: 'string', pattern: '^[ab]+$' } } });
    // 30 characters took the backtracking engine seconds per start; the body limit allows far more.
    const input = { s: `${'a'.repeat(100_000)}!` };
    const start = async (id: string) => {
      const res = await api.http.post(`/api/v1/workflows/${id}/run`).set(user.auth).send({ input });
      expect(res.status).toBe(400);
    };
    expect(
      await costRatio(
        () => start(evil),
        () => start(plain),
      ),
    ).toBeLessThan(5);
  });
});
