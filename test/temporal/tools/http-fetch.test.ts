/** http_fetch against a real local server: allowlist, refusal without it, limits, errors as information. */
import { NonRetryableError, RetryableError, toApplicationFailure } from '../../../temporal/failures';
import { httpFetchTool } from '../../../temporal/tools/http-fetch';
import { toolContext } from '../../helpers/effects-context';
import { startHttpSink, type HttpSink } from '../../helpers/http-sink';

let sink: HttpSink;
beforeAll(async () => {
  sink = await startHttpSink({
    '/page': { body: 'hello page', headers: { 'content-type': 'text/html' } },
    '/missing': { status: 404, body: 'nope' },
    '/big': { bytes: 100_000 },
    '/slow': { hang: true },
    '/to-loopback': { redirect: 'http://127.0.0.1:1/' },
  });
});
afterAll(() => sink.close());

const call = (args: Record<string, unknown>, allowed = true) =>
  httpFetchTool.execute(httpFetchTool.input.parse(args), toolContext({ allowedHosts: allowed ? [sink.host] : [] }));

describe('http_fetch tool', () => {
  it('GETs an allowed URL and returns the body text', async () => {
    await expect(call({ url: sink.url('/page') })).resolves.toEqual({
      status: 200,
      url: sink.url('/page'),
      content_type: 'text/html',
      body: 'hello page',
      truncated: false,
    });
    expect(sink.requestsTo('/page')[0]?.method).toBe('GET');
  });

  it('refuses loopback when the host is not allowed, without contacting it', async () => {
    const before = sink.requestsTo('/page').length;
    const err: unknown = await call({ url: sink.url('/page') }, false).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonRetryableError);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'url_refused', nonRetryable: true });
    expect(sink.requestsTo('/page')).toHaveLength(before);
  });

  it('refuses a redirect to a loopback port that is not allowed', async () => {
    const err: unknown = await call({ url: sink.url('/to-loopback') }).catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'url_refused', nonRetryable: true });
  });

  it('reports an HTTP error status as a result for the model', async () => {
    await expect(call({ url: sink.url('/missing') })).resolves.toMatchObject({ status: 404, body: 'nope' });
  });

  it('truncates to max_bytes', async () => {
    const out = await call({ url: sink.url('/big'), max_bytes: 500 });
    expect(out.body).toHaveLength(500);
    expect(out.truncated).toBe(true);
  });

  it('times out (retryable)', async () => {
    const err: unknown = await call({ url: sink.url('/slow'), timeout_seconds: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetryableError);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'timeout', nonRetryable: false });
  });

  it('caps max_bytes and refuses non-http schemes in its schema', () => {
    expect(httpFetchTool.input.safeParse({ url: sink.url('/'), max_bytes: 10_000_000 }).success).toBe(false);
    expect(httpFetchTool.input.safeParse({ url: 'file:///etc/passwd' }).success).toBe(false);
  });
});
