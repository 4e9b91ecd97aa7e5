/**
 * The OpenAPI document says what the server enforces: for each rule a client generated from the document (or a fuzzer
 * reading it literally) could break, a value the server refuses with 400 is one the document calls invalid, and a value
 * the document calls valid gets past the server's validation. Each case sends the request to the real API and checks
 * the same value against the document's own schema (Ajv, JSON Schema 2020-12).
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { SYSTEM_TEMPLATES } from '../../db/system-templates';
import { buildOpenApiDocument } from '../../api/openapi/document';
import { TOOL_NAMES } from '../../domain/tools/catalog';
import { actionBody, agentBody } from '../helpers/api';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

const doc = buildOpenApiDocument({ PUBLIC_URL: undefined });
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

interface Operation {
  parameters?: { name: string; in: string; schema: object }[];
  requestBody?: { content: Record<string, { schema: object }> };
}
function operation(method: string, path: string): Operation {
  const op = (doc.paths?.[path] as Record<string, Operation> | undefined)?.[method];
  if (!op) throw new Error(`${method} ${path}: not in the document`);
  return op;
}
function validates(schema: object, value: unknown): boolean {
  return ajv.validate({ ...schema, components: doc.components }, value);
}
/** Whether the document takes `value` as this operation's JSON body. */
function bodyValid(method: string, path: string, value: unknown): boolean {
  return validates(operation(method, path).requestBody!.content['application/json']!.schema, value);
}
/** Whether the document takes `value` as this operation's query parameter `name`. */
function queryValid(method: string, path: string, name: string, value: unknown): boolean {
  const param = operation(method, path).parameters?.find((p) => p.in === 'query' && p.name === name);
  if (!param) throw new Error(`${method} ${path}: no query parameter ${name}`);
  return validates(param.schema, value);
}

let api: TestApi;
let user: TestUser;
beforeAll(async () => {
  api = await startTestApi(testConfig());
  user = await createTestUser(api.database.db);
  // Enough workflows for a second page, so a cursor the server made is at hand.
  for (let i = 0; i < 3; i++) {
    const res = await api.http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({ name: `W${i}`, steps: [{ id: 'a', template: SYSTEM_TEMPLATES[0]!.content.name }] });
    expect(res.status).toBe(201);
  }
});
afterAll(() => api?.close());

/** Asserts the server refuses exactly what the document calls invalid (a 400 on this request's validation). */
function expectAgreement(label: string, documentValid: boolean, status: number): void {
  expect({ label, documentValid, refused: status === 400 }).toEqual({ label, documentValid, refused: !documentValid });
}

it('cursors: the document states the format the server reads, and any cursor of that format is a position', async () => {
  const first = await api.http.get('/api/v1/workflows?limit=1').set(user.auth);
  const made = new URL(/^<([^>]+)>/.exec(first.headers.link!)![1]!).searchParams.get('cursor')!;
  for (const path of ['/api/v1/workflows', '/api/v1/agents', '/api/v1/approvals', '/api/v1/runs']) {
    for (const cursor of [made, '0', 'x', '!!!', 'eyJpZCI6MX0', '1700000000000.dGVzdA', '0.AAAA', '01.AA', '1.A']) {
      const res = await api.http.get(`${path}?cursor=${encodeURIComponent(cursor)}`).set(user.auth);
      expectAgreement(`${path} cursor=${cursor}`, queryValid('get', path, 'cursor', cursor), res.status);
    }
  }
});

it('GET /runs: status filters are the run statuses, one or several comma-separated', async () => {
  for (const status of ['failed', 'failed,timed_out', 'bogus', '0', 'failed,', 'failed, running', ' failed']) {
    const res = await api.http.get(`/api/v1/runs?status=${encodeURIComponent(status)}`).set(user.auth);
    expectAgreement(`status=${status}`, queryValid('get', '/api/v1/runs', 'status', status), res.status);
  }
});

it('egress entries: host names and e-mail addresses as the server reads them', async () => {
  const hosts = ['api.acme.com', '*.acme.com', 'acme.com:8443', 'API.Acme.com', '0'.repeat(250), 'a..b', ' a.com'];
  hosts.push('acme.com:0', 'acme.com:65536', 'acme.com:08443', '-a.com', 'a.com.', '*.', 'a_b.com', 'a.com:');
  for (const host of hosts) {
    const body = agentBody({ egress: { http_hosts: [host] } });
    const res = await api.http.post('/api/v1/agents?dry_run=true').set(user.auth).send(body);
    expectAgreement(`http_hosts ${host}`, bodyValid('post', '/api/v1/agents', body), res.status);
  }
  const recipients = ['ops@acme.com', '@acme.com', 'Ops@Acme.com', 'Zâ', 'a@b', '@', 'a b@c.com', 'a@@b.com'];
  recipients.push('first.last+tag@mail.acme.com', '.a@b.com', 'a.@b.com', 'a@-b.com', ' a@b.com');
  for (const email of recipients) {
    const body = agentBody({ egress: { email_recipients: [email] } });
    const res = await api.http.post('/api/v1/agents?dry_run=true').set(user.auth).send(body);
    expectAgreement(`email_recipients ${email}`, bodyValid('post', '/api/v1/agents', body), res.status);
  }
});

it('callback_url: http(s) URLs without credentials, on workflows and run starts', async () => {
  const urls = ['https://example.com/hooks/stepwise', 'http://example.com:8080/a?b=c#d', '0'.repeat(300)];
  urls.push('ftp://example.com/', 'https://user:pw@example.com/', 'https://@example.com/', 'https://', 'example.com');
  urls.push('https://1.2.3.4/x', 'https://0.999/', 'https://exa mple.com/', 'https://example.com/a b', 'HTTPS://A.COM');
  urls.push('http://[::1]:8080/x', 'https://[2001:db8::1]/', 'http:///x', 'http://[1::2::3]/', 'http://0x7f.1/');
  for (const url of urls) {
    const start = { callback_url: url };
    const res = await api.http.post('/api/v1/workflows/wf_unknown/run').set(user.auth).send(start);
    expectAgreement(`run callback_url ${url}`, bodyValid('post', '/api/v1/workflows/{id}/run', start), res.status);
    const patch = { config: { callback_url: url } };
    const res2 = await api.http.patch('/api/v1/workflows/wf_unknown').set(user.auth).send(patch);
    expectAgreement(`config.callback_url ${url}`, bodyValid('patch', '/api/v1/workflows/{id}', patch), res2.status);
  }
});

it('schedule specs: exactly one of cron and interval, IANA time zones', async () => {
  const cron = '0 8 * * 1-5';
  const interval = { every_seconds: 60 };
  const specs: Record<string, unknown>[] = [
    { cron },
    { interval },
    { cron, interval },
    {},
    { cron, time_zone: 'Europe/Berlin' },
    { cron, time_zone: 'UTC' },
    { cron, time_zone: '' },
    { cron, time_zone: 'Mars/Olympus' },
    { cron: [cron, '0 9 * * *'] },
  ];
  for (const spec of specs) {
    const body = { spec };
    const create = await api.http.post('/api/v1/workflows/wf_unknown/schedules').set(user.auth).send(body);
    const label = JSON.stringify(spec);
    expectAgreement(`create ${label}`, bodyValid('post', '/api/v1/workflows/{id}/schedules', body), create.status);
    const update = await api.http.patch('/api/v1/schedules/sch_unknown').set(user.auth).send(body);
    expectAgreement(`update ${label}`, bodyValid('patch', '/api/v1/schedules/{scheduleId}', body), update.status);
  }
});

it("a step's kind: exactly one of a template (by id and/or name) and workflow_id", async () => {
  const name = SYSTEM_TEMPLATES[0]!.content.name;
  const kinds: Record<string, unknown>[] = [
    { template: name },
    { template: 'No such template', workflow_id: 'wf_x' },
    { template_id: 'tpl_x', workflow_id: 'wf_x' },
    {},
  ];
  for (const kind of kinds) {
    const body = { name: 'W', steps: [{ id: 'a', ...kind }] };
    const res = await api.http.post('/api/v1/workflows?dry_run=true').set(user.auth).send(body);
    expectAgreement(`step ${JSON.stringify(kind)}`, bodyValid('post', '/api/v1/workflows', body), res.status);
  }
  // A fetched definition carries both the name and the id it resolved to, and can be sent back.
  expect(
    bodyValid('post', '/api/v1/workflows', { name: 'W', steps: [{ id: 'a', template: name, template_id: 'x' }] }),
  ).toBe(true);
});

it("an inbound hook's body: object keys that are data, not MongoDB operators or paths", async () => {
  const bodies: unknown[] = [
    { a: { b: [{ c: 1 }] } },
    { '': 1 },
    { 'a.b': 1 },
    { $x: 1 },
    { a: { $b: 1 } },
    { a: [{ 'c.d': 1 }] },
    { 'x\u0000y': 1 },
    { stepwise_blob: 1 },
    { a: { stepwise_blob: 1 } },
    { a$: 1 },
  ];
  for (const body of bodies) {
    const res = await api.http.post('/api/v1/hooks/hook_unknown').send(body as object);
    expectAgreement(`hook ${JSON.stringify(body)}`, bodyValid('post', '/api/v1/hooks/{hookId}', body), res.status);
  }
});

it('MCP server auth.headers: 1 to 20 headers, on create and change', async () => {
  const headers = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, 'v']));
  for (const n of [0, 1, 20, 21]) {
    const body = { name: `h${n}`, url: 'https://mcp.example.com/mcp', auth: { type: 'headers', headers: headers(n) } };
    const res = await api.http.post('/api/v1/mcp-servers').set(user.auth).send(body);
    expectAgreement(`create ${n} headers`, bodyValid('post', '/api/v1/mcp-servers', body), res.status);
    const patch = { auth: body.auth };
    const res2 = await api.http.patch('/api/v1/mcp-servers/mcp_unknown').set(user.auth).send(patch);
    expectAgreement(`change ${n} headers`, bodyValid('patch', '/api/v1/mcp-servers/{id}', patch), res2.status);
  }
});

it('action_type: only with step_type "action" (and required there), on create and on a change naming both', async () => {
  const created = await api.http.post('/api/v1/agents').set(user.auth).send(agentBody());
  expect(created.status).toBe(201);
  const id = (created.body as { data: { id: string } }).data.id;
  const cases: Record<string, unknown>[] = [
    {},
    { action_type: null },
    { action_type: 'delay' },
    { step_type: 'agent', action_type: 'delay' },
    { step_type: 'agent', action_type: null },
    { step_type: 'action' },
    { step_type: 'action', action_type: null },
  ];
  for (const fields of cases) {
    const label = JSON.stringify(fields);
    const body = agentBody(fields);
    const res = await api.http.post('/api/v1/agents?dry_run=true').set(user.auth).send(body);
    expectAgreement(`create ${label}`, bodyValid('post', '/api/v1/agents', body), res.status);
    if (!('step_type' in fields)) continue;
    // A change naming both fields is judged by them alone; the stored template is an agent with no action config.
    const patch = { ...fields, action_type: fields.action_type ?? null };
    const res2 = await api.http.patch(`/api/v1/agents/${id}?dry_run=true`).set(user.auth).send(patch);
    expectAgreement(`change ${JSON.stringify(patch)}`, bodyValid('patch', '/api/v1/agents/{id}', patch), res2.status);
  }
  // An action with its action type and a valid config is valid to both.
  const action = actionBody();
  const res = await api.http.post('/api/v1/agents?dry_run=true').set(user.auth).send(action);
  expectAgreement('create an action', bodyValid('post', '/api/v1/agents', action), res.status);
});

it('map and loop: never on one step, on create and change of a workflow', async () => {
  const template = SYSTEM_TEMPLATES[0]!.content.name;
  const map = { over: '{{input.xs}}' };
  const loop = { until: 'true', max_iterations: 2 };
  const created = await api.http
    .post('/api/v1/workflows')
    .set(user.auth)
    .send({ name: 'Map or loop', steps: [{ id: 'a', template }] });
  expect(created.status).toBe(201);
  const id = (created.body as { data: { id: string } }).data.id;
  for (const settings of [{ map }, { loop }, { map, loop }]) {
    const steps = [{ id: 'a', template, ...settings }];
    const label = Object.keys(settings).join('+');
    const body = { name: 'W', steps };
    const res = await api.http.post('/api/v1/workflows?dry_run=true').set(user.auth).send(body);
    expectAgreement(`create ${label}`, bodyValid('post', '/api/v1/workflows', body), res.status);
    const res2 = await api.http.patch(`/api/v1/workflows/${id}?dry_run=true`).set(user.auth).send({ steps });
    expectAgreement(`change ${label}`, bodyValid('patch', '/api/v1/workflows/{id}', { steps }), res2.status);
    if (label === 'map+loop') expect(res.text).toContain('map and loop cannot be combined on one step');
  }
});

it('built-in tool names: the tool catalog, in default_tools and in a step’s tools', async () => {
  const template = SYSTEM_TEMPLATES.find((t) => t.content.step_type === 'agent')!.content.name;
  for (const tools of [[...TOOL_NAMES], ['rm_rf'], ['http_fetch', 'HTTP_FETCH'], ['']]) {
    const body = agentBody({ default_tools: tools });
    const res = await api.http.post('/api/v1/agents?dry_run=true').set(user.auth).send(body);
    expectAgreement(`default_tools ${tools.join()}`, bodyValid('post', '/api/v1/agents', body), res.status);
    const workflow = { name: 'W', steps: [{ id: 'a', template, tools }] };
    const res2 = await api.http.post('/api/v1/workflows?dry_run=true').set(user.auth).send(workflow);
    expectAgreement(`step tools ${tools.join()}`, bodyValid('post', '/api/v1/workflows', workflow), res2.status);
  }
  // The document names exactly the catalog's tools.
  const listed = await api.http.get('/api/v1/agents/tools').set(user.auth);
  const names = (listed.body as { data: { name: string }[] }).data.map((t) => t.name);
  for (const name of names)
    expect(bodyValid('post', '/api/v1/agents', agentBody({ default_tools: [name] }))).toBe(true);
});

it('the run event stream: each SSE item is event, id and data, the data a RunEvent as JSON', () => {
  const media = (
    doc.paths?.['/api/v1/workflows/runs/{runId}/events']?.get?.responses?.['200'] as {
      content: Record<string, { schema: object }>;
    }
  ).content['text/event-stream']!;
  const item = { event: 'run.ended', id: '7', data: '{}' };
  expect(validates(media.schema, item)).toBe(true);
  expect(validates(media.schema, { ...item, id: 'x' })).toBe(false);
  expect(validates(media.schema, { ...item, event: 'nope' })).toBe(false);
  expect(validates(media.schema, { ...item, data: {} })).toBe(false);
  const data = (doc.components?.schemas?.RunEventItem as { properties: { data: Record<string, unknown> } }).properties
    .data;
  expect(data).toMatchObject({
    contentMediaType: 'application/json',
    contentSchema: { $ref: '#/components/schemas/RunEvent' },
  });
});
