import { startTestApi, testConfig, type TestApi } from '../helpers/stack';

/** Every response, success or error, is exactly {data, error} with one of them null. */
function expectEnvelope(body: unknown, ok: boolean): void {
  expect(body).toBeInstanceOf(Object);
  expect(Object.keys(body as object).sort()).toEqual(['data', 'error']);
  const { data, error } = body as { data: unknown; error: unknown };
  if (ok) {
    expect(error).toBeNull();
    expect(data).not.toBeNull();
  } else {
    expect(data).toBeNull();
    expect(typeof error).toBe('string');
    expect((error as string).length).toBeGreaterThan(0);
  }
}

describe('the envelope and status codes', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(testConfig({ BODY_LIMIT_BYTES: '1024' }));
  });
  afterAll(() => api?.close());

  it('wraps success', async () => {
    const res = await api.http.get('/livez');
    expect(res.status).toBe(200);
    expectEnvelope(res.body, true);
  });

  it('answers an unknown route with a 404 envelope', async () => {
    const res = await api.http.get('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expectEnvelope(res.body, false);
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const res = await api.http.delete('/livez');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('GET');
    expectEnvelope(res.body, false);
  });

  it('answers malformed JSON with 400', async () => {
    const res = await api.http.post('/livez').set('Content-Type', 'application/json').send('{"a":');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('malformed JSON body');
    expectEnvelope(res.body, false);
  });

  it('answers a non-JSON body with 415', async () => {
    const res = await api.http.post('/livez').set('Content-Type', 'text/plain').send('hello');
    expect(res.status).toBe(415);
    expectEnvelope(res.body, false);
  });

  it('answers a body over the limit with 413', async () => {
    const res = await api.http
      .post('/livez')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ text: 'x'.repeat(2048) }));
    expect(res.status).toBe(413);
    expectEnvelope(res.body, false);
  });

  it('refuses $-operators and dotted keys anywhere in a body, naming the key', async () => {
    const res = await api.http.post('/livez').send({ a: [{ b: { $gt: 1 } }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('a[0].b.$gt');
    expectEnvelope(res.body, false);
  });
});
