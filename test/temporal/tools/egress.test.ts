/**
 * The egress checks of the agent tools: allowlist matching, and send_email / http_fetch refusing before any side
 * effect (real SMTP server, real HTTP sink that the SSRF guard would otherwise let the call reach).
 */
import { DEFAULT_EGRESS, resolveEgress, type EgressPolicy } from '../../../domain/egress';
import { toApplicationFailure } from '../../../temporal/failures';
import { guardedFetch } from '../../../temporal/net/guarded-fetch';
import { emailAllowed, hostAllowed } from '../../../temporal/tools/egress';
import { httpFetchTool } from '../../../temporal/tools/http-fetch';
import { sendEmailTool } from '../../../temporal/tools/send-email';
import { toolContext } from '../../helpers/effects-context';
import { startHttpSink, type HttpSink } from '../../helpers/http-sink';
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp';

let smtp: TestSmtp;
let sink: HttpSink;
beforeAll(async () => {
  smtp = await startTestSmtp();
  sink = await startHttpSink({ '/page': { body: 'hello' } });
});
afterAll(async () => {
  await smtp.close();
  await sink.close();
});

const policy = (p: Partial<EgressPolicy>): EgressPolicy => ({ ...DEFAULT_EGRESS, ...p });

describe('allowlist matching', () => {
  it('e-mail: exact addresses and whole domains, case-insensitive, no subdomains, nothing by default', () => {
    const list = ['ops@acme.com', '@corp.example'];
    expect(emailAllowed('OPS@Acme.com', list)).toBe(true);
    expect(emailAllowed('anyone@corp.example', list)).toBe(true);
    expect(emailAllowed('dev@acme.com', list)).toBe(false);
    expect(emailAllowed('x@sub.corp.example', list)).toBe(false);
    expect(emailAllowed('x@evilcorp.example', list)).toBe(false);
    expect(emailAllowed('ops@acme.com.evil.test', list)).toBe(false);
    expect(emailAllowed('ops@acme.com', [])).toBe(false);
  });

  it('hosts: exact names, *. for subdomains only, optional port, null for any host, [] for none', () => {
    const list = ['api.acme.com', '*.cdn.example', 'files.acme.com:8443'];
    const ok = (url: string, l: string[] | null = list) => hostAllowed(new URL(url), l);
    expect(ok('https://API.acme.com/x')).toBe(true);
    expect(ok('http://api.acme.com:8080/x')).toBe(true);
    expect(ok('https://a.b.cdn.example/')).toBe(true);
    expect(ok('https://cdn.example/')).toBe(false);
    expect(ok('https://evilcdn.example/')).toBe(false);
    expect(ok('https://files.acme.com:8443/')).toBe(true);
    expect(ok('https://files.acme.com/')).toBe(false);
    expect(ok('https://acme.com/')).toBe(false);
    expect(ok('https://api.acme.com.evil.test/')).toBe(false);
    expect(ok('https://anything.test/', null)).toBe(true);
    expect(ok('https://api.acme.com/', [])).toBe(false);
  });

  it('a step field replaces the template field; unset fields fall back to the template, then the defaults', () => {
    expect(resolveEgress(undefined, undefined)).toEqual({ email_recipients: [], http_hosts: null });
    expect(resolveEgress({ email_recipients: ['@a.com'], http_hosts: ['a.com'] }, { http_hosts: [] })).toEqual({
      email_recipients: ['@a.com'],
      http_hosts: [],
    });
  });
});

describe('send_email refuses before sending', () => {
  const mail = { subject: 's', text: 't' };

  it.each([
    ['to', { to: 'x@evil.test' }],
    ['cc', { to: 'ops@acme.com', cc: ['ops@acme.com', 'x@evil.test'] }],
    ['bcc', { to: 'ops@acme.com', bcc: 'x@evil.test' }],
    ['reply_to', { to: 'ops@acme.com', reply_to: 'x@evil.test' }],
  ])('a foreign %s recipient', async (_field, recipients) => {
    const before = smtp.messages.length;
    const ctx = toolContext({ smtpUrl: smtp.url }, { egress: policy({ email_recipients: ['ops@acme.com'] }) });
    const err: unknown = await sendEmailTool
      .execute(sendEmailTool.input.parse({ ...mail, ...recipients }), ctx)
      .catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'egress_denied', nonRetryable: true });
    // The allowed message through the same context arrives, so the refusal above is the policy, not the server.
    await sendEmailTool.execute(sendEmailTool.input.parse({ ...mail, to: 'ops@acme.com' }), ctx);
    await smtp.waitForMessages(before + 1);
    expect(smtp.messages.slice(before).map((m) => m.envelope.to)).toEqual([['ops@acme.com']]);
  });

  it('with no allowlist (the default) nobody can be mailed, and the message says how to fix it', async () => {
    const err: unknown = await sendEmailTool
      .execute(sendEmailTool.input.parse({ ...mail, to: 'ops@acme.com' }), toolContext({ smtpUrl: smtp.url }))
      .catch((e: unknown) => e);
    expect((err as Error).message).toContain('egress.email_recipients');
  });
});

describe('http_fetch and the per-hop hook', () => {
  it('a host outside the list is refused without contacting it; the listed host is fetched', async () => {
    const ctx = (hosts: string[]) =>
      toolContext({ allowedHosts: [sink.host] }, { egress: policy({ http_hosts: hosts }) });
    const args = httpFetchTool.input.parse({ url: sink.url('/page') });
    const err: unknown = await httpFetchTool.execute(args, ctx(['public.example'])).catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'egress_denied', nonRetryable: true });
    expect(sink.requestsTo('/page')).toHaveLength(0);
    await expect(httpFetchTool.execute(args, ctx([sink.host]))).resolves.toMatchObject({ status: 200 });
    expect(sink.requestsTo('/page')).toHaveLength(1);
  });

  it('guardedFetch calls checkHop for the first URL and every redirect target, before contacting it', async () => {
    sink.route('/r1', { redirect: sink.url('/r2') });
    sink.route('/r2', { body: 'end' });
    const seen: string[] = [];
    const res = await guardedFetch({
      method: 'GET',
      url: sink.url('/r1'),
      timeoutMs: 5_000,
      maxBytes: 1024,
      allowedHosts: [sink.host],
      checkHop: (url, hop) => seen.push(`${hop} ${url.pathname}`),
    });
    expect(res.body.toString()).toBe('end');
    expect(seen).toEqual(['0 /r1', '1 /r2']);

    const refused = await guardedFetch({
      method: 'GET',
      url: sink.url('/r1'),
      timeoutMs: 5_000,
      maxBytes: 1024,
      allowedHosts: [sink.host],
      checkHop: (url) => {
        if (url.pathname === '/r2') throw new Error('hop refused');
      },
    }).catch((e: unknown) => e);
    expect((refused as Error).message).toBe('hop refused');
    expect(sink.requestsTo('/r2')).toHaveLength(1);
  });
});
