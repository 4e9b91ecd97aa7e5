/** Owner isolation: user B gets exactly the answer for an unknown id for every one of A's templates, on every route. */
import type { Response } from 'supertest';
import { actionBody, agentBody, expectError } from '../../helpers/api';
import { openApiChecker } from '../../helpers/openapi';
import { startTestApi, type TestApi } from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';

let api: TestApi;
let a: TestUser;
let b: TestUser;
const aIds: string[] = [];
const oas = openApiChecker();

beforeAll(async () => {
  api = await startTestApi();
  a = await createTestUser(api.database.db);
  b = await createTestUser(api.database.db);
  for (const body of [
    agentBody({ name: 'A1', tags: ['secret'] }),
    agentBody({ name: 'A2' }),
    actionBody({ name: 'A3' }),
  ]) {
    const res = await api.http.post('/api/v1/agents').set(a.auth).send(body);
    expect(res.status).toBe(201);
    aIds.push(res.body.data.id);
  }
});
afterAll(() => api?.close());

/** What B sees for a route; compared with what B sees for an id that never existed. */
async function asB(method: 'get' | 'patch' | 'delete', id: string) {
  const path = `/api/v1/agents/${id}`;
  const req =
    method === 'patch'
      ? api.http.patch(path).set(b.auth).send({ name: 'taken over' })
      : api.http[method](path).set(b.auth);
  const res = await req;
  oas.check(res);
  return res;
}

it('B gets 404 for every one of A’s ids on GET, PATCH and DELETE — the same answer as for an unknown id', async () => {
  const unknown = 'tpl_neverExisted0000';
  for (const method of ['get', 'patch', 'delete'] as const) {
    const reference = await asB(method, unknown);
    expectError(reference, 404);
    for (const id of aIds) {
      const res = await asB(method, id);
      expectError(res, 404);
      expect(res.body.error).toBe(reference.body.error.replace(unknown, id));
    }
  }
});

it('A’s templates are untouched and still A’s', async () => {
  for (const id of aIds) {
    const res = await api.http.get(`/api/v1/agents/${id}`).set(a.auth);
    expect(res.status).toBe(200);
    expect(res.body.data.name).not.toBe('taken over');
  }
  expect(await api.database.db.collection('agent_templates').countDocuments({ owner_id: a.id })).toBe(3);
});

it('B’s list holds system templates and B’s own only, whatever the filters', async () => {
  const own = await api.http
    .post('/api/v1/agents')
    .set(b.auth)
    .send(agentBody({ name: 'B1', tags: ['secret'] }));
  for (const qs of ['', '?tag=secret', '?step_type=action', '?step_type=agent&limit=1']) {
    let url: string | undefined = `/api/v1/agents${qs}`;
    const seen: { id: string; system: boolean }[] = [];
    while (url) {
      const res: Response = await api.http.get(url).set(b.auth);
      oas.check(res);
      expect(res.status).toBe(200);
      seen.push(...res.body.data);
      const next: string | undefined = /<([^>]+)>; rel="next"/.exec(res.headers.link ?? '')?.[1];
      url = next ? `${new URL(next).pathname}${new URL(next).search}` : undefined;
    }
    for (const t of seen) {
      expect(aIds).not.toContain(t.id);
      expect(t.system || t.id === own.body.data.id).toBe(true);
    }
  }
  const tagged = await api.http.get('/api/v1/agents?tag=secret').set(b.auth);
  expect(tagged.body.data.map((t: { id: string }) => t.id)).toEqual([own.body.data.id]);
});
