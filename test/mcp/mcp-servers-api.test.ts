/**
 * MCP servers as a resource, through the real app and database: create, list, read, change, delete; names unique per
 * owner; credentials stored sealed and never in any answer; another user's server is a 404; without a key 401.
 */
import { openApiChecker } from '../helpers/openapi';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

interface ServerBody {
  id: string;
  name: string;
  url: string;
  auth: { type: string };
  allowed_tools: string[] | null;
}

const TOKEN = 'tok-secret-4f9d2c7a1b';
const HEADER_SECRET = 'hdr-secret-88e1f03d';

describe('MCP servers API', () => {
  let api: TestApi;
  let user: TestUser;
  let other: TestUser;
  const oas = openApiChecker();

  beforeAll(async () => {
    api = await startTestApi(testConfig({ MCP_SERVERS_MAX_PER_USER: '3' }));
    user = await createTestUser(api.database.db);
    other = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  const create = async (who: TestUser, body: Record<string, unknown>) => {
    const res = await api.http.post('/api/v1/mcp-servers').set(who.auth).send(body);
    oas.check(res);
    return res;
  };

  it('creates, lists, reads, changes and deletes; secrets are sealed and never answered', async () => {
    const name = uniqueId('srv');
    const created = await create(user, {
      name,
      url: 'https://mcp.example.com/mcp',
      auth: { type: 'bearer', token: TOKEN },
      allowed_tools: ['echo'],
    });
    expect(created.status).toBe(201);
    const server = (created.body as { data: ServerBody }).data;
    expect(server).toMatchObject({ name, auth: { type: 'bearer' }, allowed_tools: ['echo'] });
    expect(server.id).toMatch(/^mcp_/);
    expect(created.headers.location).toBe(`/api/v1/mcp-servers/${server.id}`);

    const stored = await api.database.db.collection('mcp_servers').findOne({ _id: server.id as never });
    expect(JSON.stringify(stored)).not.toContain(TOKEN);
    expect(stored?.credentials).toEqual(expect.objectContaining({ data: expect.any(String) }));

    const list = await api.http.get('/api/v1/mcp-servers').set(user.auth);
    oas.check(list);
    expect((list.body as { data: ServerBody[] }).data.map((s) => s.id)).toEqual([server.id]);

    const patched = await api.http
      .patch(`/api/v1/mcp-servers/${server.id}`)
      .set(user.auth)
      .send({ auth: { type: 'headers', headers: { 'X-Api-Key': HEADER_SECRET } }, allowed_tools: null });
    oas.check(patched);
    expect(patched.status).toBe(200);
    expect((patched.body as { data: ServerBody }).data).toMatchObject({
      auth: { type: 'headers' },
      allowed_tools: null,
    });

    const read = await api.http.get(`/api/v1/mcp-servers/${server.id}`).set(user.auth);
    oas.check(read);
    for (const res of [created, list, patched, read]) {
      expect(res.text).not.toContain(TOKEN);
      expect(res.text).not.toContain(HEADER_SECRET);
    }
    const restored = await api.database.db.collection('mcp_servers').findOne({ _id: server.id as never });
    expect(JSON.stringify(restored)).not.toContain(HEADER_SECRET);

    // A change must change something: no body, or an empty one, is a 400 (Schemathesis found it answered 200).
    for (const send of [undefined, {}]) {
      const req = api.http.patch(`/api/v1/mcp-servers/${server.id}`).set(user.auth);
      const empty = send === undefined ? await req : await req.send(send);
      expect(empty.status).toBe(400);
    }

    const removed = await api.http.patch(`/api/v1/mcp-servers/${server.id}`).set(user.auth).send({ auth: null });
    expect((removed.body as { data: ServerBody }).data.auth).toEqual({ type: 'none' });

    const del = await api.http.delete(`/api/v1/mcp-servers/${server.id}`).set(user.auth);
    oas.check(del);
    expect(del.body).toEqual({ data: { id: server.id, deleted: true }, error: null });
    expect((await api.http.get(`/api/v1/mcp-servers/${server.id}`).set(user.auth)).status).toBe(404);
  });

  it("answers 404 for another user's server on every route, and lists only one's own", async () => {
    const res = await create(user, { name: uniqueId('mine'), url: 'http://mcp.example.com/mcp' });
    const id = (res.body as { data: ServerBody }).data.id;
    for (const req of [
      api.http.get(`/api/v1/mcp-servers/${id}`),
      api.http.patch(`/api/v1/mcp-servers/${id}`).send({ name: 'taken' }),
      api.http.delete(`/api/v1/mcp-servers/${id}`),
    ]) {
      const answer = await req.set(other.auth);
      oas.check(answer);
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ data: null, error: `MCP server ${id} not found` });
    }
    const theirs = await api.http.get('/api/v1/mcp-servers').set(other.auth);
    expect((theirs.body as { data: ServerBody[] }).data).toEqual([]);
    expect((await api.http.get(`/api/v1/mcp-servers/mcp_nope`).set(user.auth)).status).toBe(404);
    expect((await api.http.get('/api/v1/mcp-servers')).status).toBe(401);
    await api.http.delete(`/api/v1/mcp-servers/${id}`).set(user.auth);
  });

  it('refuses duplicate names (409), bad URLs, credentials in the URL, reserved headers and a full quota', async () => {
    const name = uniqueId('dup');
    const first = await create(user, { name, url: 'https://a.example.com/mcp' });
    expect(first.status).toBe(201);
    const again = await create(user, { name, url: 'https://b.example.com/mcp' });
    expect(again.status).toBe(409);
    expect(again.body.error).toContain(`"${name}"`);
    // The same name is free for another user.
    expect((await create(other, { name, url: 'https://b.example.com/mcp' })).status).toBe(201);
    const second = await create(user, { name: uniqueId('two'), url: 'https://c.example.com/mcp' });
    const rename = await api.http
      .patch(`/api/v1/mcp-servers/${(second.body as { data: ServerBody }).data.id}`)
      .set(user.auth)
      .send({ name });
    oas.check(rename);
    expect(rename.status).toBe(409);

    const bad = [
      [{ name: uniqueId('x'), url: 'ftp://a.example.com/' }, 'url'],
      // Values that are no URL at all (Schemathesis found these answered 500).
      [{ name: uniqueId('x'), url: '' }, 'url'],
      [{ name: uniqueId('x'), url: 'x' }, 'url'],
      // No host: URL parsers read `http:///mcp` as the host `mcp`.
      [{ name: uniqueId('x'), url: 'http:///mcp' }, 'url: must be an http or https URL'],
      [{ name: uniqueId('x'), url: 'https://user:pw@a.example.com/mcp' }, 'no credentials in the URL'],
      [{ name: 'has space', url: 'https://a.example.com/mcp' }, 'name'],
      [
        { name: uniqueId('x'), url: 'https://a.example.com/mcp', auth: { type: 'headers', headers: { Host: 'x' } } },
        'set by the transport',
      ],
      [{ name: uniqueId('x'), url: 'https://a.example.com/mcp', auth: { type: 'bearer', token: 'a\nb' } }, 'auth'],
    ] as const;
    for (const [body, message] of bad) {
      const res = await create(user, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(message);
    }

    const third = await create(user, { name: uniqueId('three'), url: 'https://d.example.com/mcp' });
    expect(third.status).toBe(201);
    const over = await create(user, { name: uniqueId('four'), url: 'https://d.example.com/mcp' });
    expect(over.status).toBe(409);
    expect(over.body.error).toContain('MCP_SERVERS_MAX_PER_USER');
  });

  it('takes an IPv6 literal host like any other, on create and on change', async () => {
    // Where it may point is decided when a run uses it (docs/mcp.md), not at registration.
    const someone = await createTestUser(api.database.db);
    const v6 = await create(someone, { name: uniqueId('v6'), url: 'http://[::1]:8080/mcp' });
    oas.check(v6);
    expect(v6.status).toBe(201);
    const { id, url } = (v6.body as { data: ServerBody }).data;
    expect(url).toBe('http://[::1]:8080/mcp');
    const moved = await api.http
      .patch(`/api/v1/mcp-servers/${id}`)
      .set(someone.auth)
      .send({ url: 'https://[2001:db8::5]/mcp' });
    oas.check(moved);
    expect(moved.status).toBe(200);
    const empty = await api.http.patch(`/api/v1/mcp-servers/${id}`).set(someone.auth).send({ url: 'http:///mcp' });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toContain('url: must be an http or https URL');
  });

  it('refuses credentials when the service has no key to seal them with', async () => {
    const plain = await startTestApi(testConfig({ PAYLOAD_CODEC_KEYS: '' }));
    try {
      const someone = await createTestUser(plain.database.db);
      const res = await plain.http
        .post('/api/v1/mcp-servers')
        .set(someone.auth)
        .send({ name: 'x', url: 'https://a.example.com/mcp', auth: { type: 'bearer', token: TOKEN } });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('PAYLOAD_CODEC_KEYS');
      expect(await plain.database.db.collection('mcp_servers').countDocuments()).toBe(0);
    } finally {
      await plain.close();
    }
  });
});
