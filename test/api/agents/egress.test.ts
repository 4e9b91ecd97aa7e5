/**
 * The `egress` field of templates and workflow steps: checked on write with errors naming the entry, stored,
 * shown by GET, and published in the OpenAPI document (every response is checked against it).
 */
import { agentBody, actionBody, expectError } from '../../helpers/api';
import { openApiChecker } from '../../helpers/openapi';
import { startTestApi, type TestApi } from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';

let api: TestApi;
let user: TestUser;
const oas = openApiChecker();

beforeAll(async () => {
  api = await startTestApi();
  user = await createTestUser(api.database.db);
});
afterAll(() => api?.close());

const send = async (method: 'post' | 'patch' | 'get', path: string, body?: object) => {
  const req = api.http[method](path).set(user.auth);
  const res = body ? await req.send(body) : await req;
  oas.check(res);
  return res;
};

describe('agent template egress', () => {
  it('stores the policy (normalised to lower case) and shows it; absent means the defaults ({})', async () => {
    const egress = { email_recipients: ['Ops@Acme.com', '@acme.com'], http_hosts: ['api.acme.com', '*.acme.com:8443'] };
    const created = await send('post', '/api/v1/agents', agentBody({ default_tools: ['send_email'], egress }));
    expect(created.status).toBe(201);
    const read = await send('get', `/api/v1/agents/${created.body.data.id as string}`);
    expect(read.body.data.egress).toEqual({
      email_recipients: ['ops@acme.com', '@acme.com'],
      http_hosts: ['api.acme.com', '*.acme.com:8443'],
    });

    const plain = await send('post', '/api/v1/agents', agentBody());
    expect(plain.body.data.egress).toEqual({});
    const patched = await send('patch', `/api/v1/agents/${plain.body.data.id as string}`, {
      egress: { http_hosts: [] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.egress).toEqual({ http_hosts: [] });
  });

  it.each([
    ['a non-address', { email_recipients: ['not an address'] }, 'egress.email_recipients[0]'],
    ['a bare @', { email_recipients: ['ok@acme.com', '@'] }, 'egress.email_recipients[1]'],
    ['an empty domain label', { email_recipients: ['@acme..com'] }, 'egress.email_recipients[0]'],
    ['a URL instead of a host', { http_hosts: ['https://acme.com'] }, 'egress.http_hosts[0]'],
    ['a path', { http_hosts: ['acme.com/path'] }, 'egress.http_hosts[0]'],
    ['a port out of range', { http_hosts: ['acme.com', 'acme.com:99999'] }, 'egress.http_hosts[1]'],
    ['a lone *', { http_hosts: ['*'] }, 'egress.http_hosts[0]'],
    ['a wildcard inside a name', { http_hosts: ['a.*.acme.com'] }, 'egress.http_hosts[0]'],
    ['an over-long entry', { http_hosts: ['x'.repeat(300)] }, 'egress.http_hosts[0]'],
    [
      'more than 100 entries',
      { http_hosts: Array.from({ length: 101 }, (_, i) => `h${i}.acme.com`) },
      'egress.http_hosts',
    ],
    ['an unknown field', { web: ['acme.com'] }, 'egress'],
  ])('refuses %s, naming the entry', async (_label, egress, field) => {
    const res = await send('post', '/api/v1/agents', agentBody({ egress }));
    expectError(res, 400, field);
  });

  it('refuses an egress policy on an action template (action steps are written by the user, not a model)', async () => {
    const res = await send('post', '/api/v1/agents', actionBody({ egress: { email_recipients: ['a@acme.com'] } }));
    expectError(res, 400, 'egress: only allowed when step_type is "agent"');
  });

  it('is published in the OpenAPI document', async () => {
    const doc = (await api.http.get('/api/v1/openapi.json')).body as {
      components: { schemas: Record<string, unknown> };
    };
    const text = JSON.stringify(doc.components.schemas);
    expect(doc.components.schemas.EgressPolicy).toBeDefined();
    expect(text).toContain('email_recipients');
    expect(text).toContain('http_hosts');
  });
});

describe('workflow step egress', () => {
  it('is validated naming the step and shown by GET', async () => {
    const tpl = await send('post', '/api/v1/agents', agentBody({ default_tools: ['send_email'] }));
    const templateId = tpl.body.data.id as string;
    const bad = await send('post', '/api/v1/workflows', {
      name: 'egress',
      steps: [{ id: 'mail', template_id: templateId, egress: { email_recipients: ['nope'] } }],
    });
    expectError(bad, 400, 'steps[0].egress.email_recipients[0]');

    const good = await send('post', '/api/v1/workflows', {
      name: 'egress',
      steps: [{ id: 'mail', template_id: templateId, egress: { email_recipients: ['ops@acme.com'] } }],
    });
    expect(good.status).toBe(201);
    const read = await send('get', `/api/v1/workflows/${good.body.data.id as string}`);
    expect(read.body.data.steps[0].egress).toEqual({ email_recipients: ['ops@acme.com'] });
  });

  it('refuses egress on an action step', async () => {
    const tpl = await send('post', '/api/v1/agents', actionBody());
    const res = await send('post', '/api/v1/workflows', {
      name: 'egress',
      steps: [{ id: 'notify', template_id: tpl.body.data.id as string, egress: { http_hosts: [] } }],
    });
    expectError(res, 400, 'steps[0] (notify).egress: only agent steps take egress');
  });
});
