/** Keyset paging of GET /api/v1/agents: limit, opaque cursor, Link header across pages, filters kept. */
import { SYSTEM_TEMPLATES } from '../../../db/system-templates';
import { agentBody, expectError } from '../../helpers/api';
import { openApiChecker } from '../../helpers/openapi';
import { startTestApi, testConfig, type TestApi } from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';

const PUBLIC_URL = 'https://stepwise.example.test/base';
let api: TestApi;
let user: TestUser;
const oas = openApiChecker();
const OWN = 12;

beforeAll(async () => {
  api = await startTestApi(testConfig({ PUBLIC_URL }));
  user = await createTestUser(api.database.db);
  for (let i = 0; i < OWN; i++) {
    const res = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send(agentBody({ name: `T${i}`, tags: i % 3 === 0 ? ['third'] : [] }));
    expect(res.status).toBe(201);
  }
});
afterAll(() => api?.close());

function nextLink(link: string | undefined): string | undefined {
  return /^<([^>]+)>; rel="next"$/.exec(link ?? '')?.[1];
}

/** Follows Link headers from `first`; returns every page. */
async function walk(first: string): Promise<{ ids: string[]; names: string[]; pages: number; links: string[] }> {
  const out = { ids: [] as string[], names: [] as string[], pages: 0, links: [] as string[] };
  let url: string | undefined = first;
  while (url) {
    const res = await api.http.get(url.replace(PUBLIC_URL, '')).set(user.auth);
    oas.check(res);
    expect(res.status).toBe(200);
    out.pages++;
    out.ids.push(...res.body.data.map((t: { id: string }) => t.id));
    out.names.push(...res.body.data.map((t: { name: string }) => t.name));
    url = nextLink(res.headers.link);
    if (url) out.links.push(url);
    expect(out.pages).toBeLessThan(50);
  }
  return out;
}

it('walks every template exactly once, in a stable order, following absolute Link URLs', async () => {
  const total = SYSTEM_TEMPLATES.length + OWN;
  const paged = await walk('/api/v1/agents?limit=4');
  expect(paged.pages).toBe(Math.ceil(total / 4));
  expect(new Set(paged.ids).size).toBe(total);
  expect(paged.ids).toHaveLength(total);
  for (const link of paged.links) {
    expect(link.startsWith(`${PUBLIC_URL}/api/v1/agents?`)).toBe(true);
    expect(new URL(link).searchParams.get('limit')).toBe('4');
  }
  const whole = await walk('/api/v1/agents?limit=200');
  expect(whole.pages).toBe(1);
  expect(paged.ids).toEqual(whole.ids);
  // System templates first, then one's own in creation order.
  expect(whole.names.slice(SYSTEM_TEMPLATES.length)).toEqual(Array.from({ length: OWN }, (_, i) => `T${i}`));
});

it('without limit returns the default page, and no Link header on the last page', async () => {
  const res = await api.http.get('/api/v1/agents').set(user.auth);
  expect(res.status).toBe(200);
  expect(res.body.data).toHaveLength(SYSTEM_TEMPLATES.length + OWN);
  expect(res.headers.link).toBeUndefined();
});

it('keeps filters in the Link header', async () => {
  const paged = await walk('/api/v1/agents?tag=third&limit=2');
  expect(paged.names).toEqual(['T0', 'T3', 'T6', 'T9']);
  for (const link of paged.links) expect(new URL(link).searchParams.get('tag')).toBe('third');
  const actions = await walk('/api/v1/agents?step_type=action&limit=2');
  expect(actions.ids).toHaveLength(SYSTEM_TEMPLATES.filter((t) => t.content.step_type === 'action').length);
});

it('an item deleted between pages is neither repeated nor does it shift the rest', async () => {
  const first = await api.http.get('/api/v1/agents?limit=10').set(user.auth);
  const firstIds = first.body.data.map((t: { id: string }) => t.id);
  const victim = firstIds.find((_: string, i: number) => !first.body.data[i].system);
  expect((await api.http.delete(`/api/v1/agents/${victim}`).set(user.auth)).status).toBe(200);
  const rest = await walk(nextLink(first.headers.link)!);
  expect(rest.ids.filter((id) => firstIds.includes(id))).toEqual([]);
  expect(firstIds.length + rest.ids.length).toBe(SYSTEM_TEMPLATES.length + OWN);
});

it('a cursor not of the documented form is a 400 naming the cursor', async () => {
  const first = await api.http.get('/api/v1/agents?limit=2').set(user.auth);
  const cursor = new URL(nextLink(first.headers.link)!).searchParams.get('cursor')!;
  const tampered = Buffer.from(JSON.stringify({ id: { $gt: '' } })).toString('base64url');
  for (const bad of [tampered, `${cursor}!`, `-${cursor}`, 'x'.repeat(600), '!!!', '1.A']) {
    expectError(await api.http.get(`/api/v1/agents?cursor=${encodeURIComponent(bad)}`).set(user.auth), 400, 'cursor');
  }
});

it('takes limit as the document describes it: decimal digits only, nothing a number parser would also read', async () => {
  for (const limit of ['', '0x10', '1e1', '+1', '%201', '01', '1.0', 'abc', '0', '201']) {
    const res = await api.http.get(`/api/v1/agents?limit=${limit}`).set(user.auth);
    expect([limit, res.status]).toEqual([limit, 400]);
    oas.check(res);
  }
  expectError(await api.http.get('/api/v1/agents?limit=abc').set(user.auth), 400, 'limit', 'decimal integer');
  expect((await api.http.get('/api/v1/agents?limit=10').set(user.auth)).body.data).toHaveLength(10);
});
