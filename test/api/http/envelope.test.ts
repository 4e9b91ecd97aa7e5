import { expectEnvelope } from '../../helpers/api';
import { startTestApi, testConfig, type TestApi } from '../../helpers/stack';

describe('the envelope and status codes', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(testConfig({ BODY_LIMIT_BYTES: '1024' }));
  });
  afterAll(() => api?.close());

  it('wraps success', async () => {
    const res = await api.http.get('/livez');
    expect(res.status).toBe(200);
    expectEnvelope(res, true);
  });

  it('answers an unknown route with a 404 envelope', async () => {
    const res = await api.http.get('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expectEnvelope(res, false);
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const res = await api.http.delete('/livez');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('GET');
    expectEnvelope(res, false);
  });

  it('answers a method no route has (TRACE, PROPFIND) with 405 and Allow too, not 501', async () => {
    for (const res of [await api.http.trace('/livez'), await api.http.propfind('/api/v1/agents')]) {
      expect(res.status).toBe(405);
      expect(res.headers.allow).toContain('GET');
      expectEnvelope(res, false);
    }
  });

  it('answers OPTIONS with the allowed methods in the envelope', async () => {
    const res = await api.http.options('/livez');
    expect(res.status).toBe(200);
    expectEnvelope(res, true);
    expect(res.body.data.allow).toEqual(expect.arrayContaining(['GET', 'HEAD']));
  });

  it('answers malformed JSON with 400', async () => {
    const res = await api.http.post('/livez').set('Content-Type', 'application/json').send('{"a":');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('malformed JSON body');
    expectEnvelope(res, false);
  });

  it('answers a non-JSON body with 415', async () => {
    const res = await api.http.post('/livez').set('Content-Type', 'text/plain').send('hello');
    expect(res.status).toBe(415);
    expectEnvelope(res, false);
  });

  it('answers a body over the limit with 413', async () => {
    const res = await api.http
      .post('/livez')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ text: 'x'.repeat(2048) }));
    expect(res.status).toBe(413);
    expectEnvelope(res, false);
  });

  it('refuses $-operators and dotted keys anywhere in a body, naming the key', async () => {
    const res = await api.http.post('/livez').send({ a: [{ b: { $gt: 1 } }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('a[0].b.$gt');
    expectEnvelope(res, false);
  });
});
