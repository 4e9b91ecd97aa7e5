/** http_request action against a real local HTTP server: what the server saw, the output, the classification. */
import { validateActionConfig } from '../../../domain/actions/catalog';
import { ACTIONS } from '../../../temporal/actions/registry';
import { StepError, toApplicationFailure } from '../../../temporal/failures';
import { actionContext } from '../../helpers/effects-context';
import { startHttpSink, type HttpSink } from '../../helpers/http-sink';

let sink: HttpSink;
beforeAll(async () => {
  sink = await startHttpSink();
});
afterAll(() => sink.close());

const action = ACTIONS.http_request;

function runConfig(config: Record<string, unknown>) {
  const checked = validateActionConfig('http_request', config, 'run');
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  return checked.value;
}

const ctx = (extra: { runId?: string; stepId?: string } = {}) => actionContext({ allowedHosts: [sink.host] }, extra);

async function failure(config: Record<string, unknown>) {
  const err: unknown = await action.execute(runConfig(config), ctx()).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(StepError);
  return toApplicationFailure(err);
}

describe('http_request action', () => {
  it('sends method, headers, JSON body and Idempotency-Key <run id>:<step id>', async () => {
    sink.route('/orders', {
      status: 201,
      body: { id: 7 },
      headers: { etag: '"v1"', 'set-cookie': 'secret=1', 'x-request-id': 'req-1' },
    });
    const out = await action.execute(
      runConfig({ method: 'POST', url: sink.url('/orders'), headers: { 'X-Trace': 'abc' }, body: { qty: 2 } }),
      ctx({ runId: 'run_abc', stepId: 'create-order' }),
    );
    const seen = sink.requestsTo('/orders')[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.headers['idempotency-key']).toBe('run_abc:create-order');
    expect(seen.headers['x-trace']).toBe('abc');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen.text)).toEqual({ qty: 2 });
    expect(out).toEqual({
      status: 201,
      url: sink.url('/orders'),
      headers: expect.objectContaining({ etag: '"v1"', 'x-request-id': 'req-1', 'content-type': 'application/json' }),
      body: { id: 7 },
      truncated: false,
      bytes: 8,
    });
    // Only selected headers are copied into the output.
    expect(out.headers['set-cookie']).toBeUndefined();
  });

  it('sends a string body as text and returns a text body as a string', async () => {
    sink.route('/echo', { body: 'plain answer' });
    const out = await action.execute(runConfig({ method: 'PUT', url: sink.url('/echo'), body: 'raw text' }), ctx());
    expect(sink.requestsTo('/echo')[0]).toMatchObject({ method: 'PUT', text: 'raw text' });
    expect(sink.requestsTo('/echo')[0]!.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(out.body).toBe('plain answer');
  });

  it('the same step sends the same Idempotency-Key on every attempt', async () => {
    sink.route('/flaky', [{ status: 503 }, { status: 200, body: { ok: 'second' } }]);
    const first: unknown = await action
      .execute(runConfig({ url: sink.url('/flaky') }), ctx({ runId: 'run_r', stepId: 's1' }))
      .catch((e: unknown) => e);
    expect(toApplicationFailure(first)).toMatchObject({ type: 'http_5xx', nonRetryable: false });
    const second = await action.execute(runConfig({ url: sink.url('/flaky') }), ctx({ runId: 'run_r', stepId: 's1' }));
    expect(second.body).toEqual({ ok: 'second' });
    expect(sink.requestsTo('/flaky').map((r) => r.headers['idempotency-key'])).toEqual(['run_r:s1', 'run_r:s1']);
  });

  it('truncates a long body, flags it, and does not parse it', async () => {
    sink.route('/large', { bytes: 50_000 });
    const out = await action.execute(runConfig({ url: sink.url('/large'), max_response_bytes: 100 }), ctx());
    expect(out).toMatchObject({ truncated: true, bytes: 100, body: 'x'.repeat(100) });
  });

  it.each([
    [400, 'http_4xx', true],
    [401, 'http_4xx', true],
    [404, 'http_4xx', true],
    [422, 'http_4xx', true],
    [408, 'timeout', false],
    [429, 'http_429', false],
    [500, 'http_5xx', false],
    [502, 'http_5xx', false],
    [503, 'http_5xx', false],
  ])('status %i → %s (non-retryable: %s)', async (status, type, nonRetryable) => {
    sink.route(`/status-${status}`, { status });
    const f = await failure({ url: sink.url(`/status-${status}`) });
    expect(f).toMatchObject({ type, nonRetryable });
    expect(f.details).toEqual([{ status }]);
  });

  it('honours Retry-After on 429 as the next retry delay', async () => {
    sink.route('/limited', { status: 429, headers: { 'retry-after': '7' } });
    const f = await failure({ url: sink.url('/limited') });
    expect(f).toMatchObject({ type: 'http_429', nonRetryable: false, nextRetryDelay: 7000 });
  });

  it('times out (retryable)', async () => {
    sink.route('/never-answers', { hang: true });
    const f = await failure({ url: sink.url('/never-answers'), timeout_seconds: 1 });
    expect(f).toMatchObject({ type: 'timeout', nonRetryable: false });
  });

  it('refuses loopback without the allowlist, without sending anything', async () => {
    sink.route('/private', {});
    const err: unknown = await action
      .execute(runConfig({ url: sink.url('/private') }), actionContext())
      .catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'url_refused', nonRetryable: true });
    expect(sink.requestsTo('/private')).toHaveLength(0);
  });

  it('a refused connection is retryable', async () => {
    const closed = await startHttpSink();
    await closed.close();
    const err: unknown = await action
      .execute(runConfig({ url: closed.url('/') }), actionContext({ allowedHosts: [closed.host] }))
      .catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'network', nonRetryable: false });
  });

  it('its config refuses reserved headers, bodies on GET, other schemes and unknown keys', () => {
    const issues = (config: Record<string, unknown>) => {
      const r = validateActionConfig('http_request', config, 'run');
      return r.ok ? [] : r.issues.map((i) => i.path);
    };
    expect(issues({ url: 'http://example.com', headers: { Host: 'evil' } })).toEqual(['headers.Host']);
    expect(issues({ url: 'http://example.com', headers: { 'Idempotency-Key': 'mine' } })).toEqual([
      'headers.Idempotency-Key',
    ]);
    expect(issues({ url: 'http://example.com', headers: { 'X-A': 'a\r\nX-B: b' } })).toEqual(['headers.X-A']);
    expect(issues({ url: 'http://example.com', body: { a: 1 } })).toEqual(['body']);
    expect(issues({ url: 'ftp://example.com' })).toEqual(['url']);
    expect(issues({ url: 'http://example.com', verb: 'GET' })).toEqual(['verb']);
  });
});
