/**
 * The codec endpoint the Temporal Web UI decrypts through (Temporal's remote codec protocol). It opens every tenant's
 * payloads, so it answers only to CODEC_ACCESS_TOKEN — in the path (the UI's --ui-codec-endpoint URL) or as a Bearer
 * header (temporal CLI --codec-auth) — never to a user's API key; it is absent without a token; it answers the UI's
 * CORS preflight for the UI's origin only; and the token never reaches the logs.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import pino from 'pino';
import { Registry } from 'prom-client';
import request from 'supertest';
import { createApp } from '../../api/app';
import { EncryptionCodec } from '../../shared/codec/encryption-codec';
import { payloadFromJson, payloadToJson, type JsonPayload } from '../../shared/codec/payload-json';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { composeApi } from '../../api/compose';

const TOKEN = randomBytes(32).toString('hex');
const UI = 'http://127.0.0.1:18233';

describe('codec endpoint', () => {
  let api: TestApi;
  let user: TestUser;
  let codec: EncryptionCodec;

  beforeAll(async () => {
    api = await startTestApi(testConfig({ CODEC_ACCESS_TOKEN: TOKEN, TEMPORAL_UI_URL: UI }));
    user = await createTestUser(api.database.db);
    codec = new EncryptionCodec(api.config.PAYLOAD_CODEC_KEYS);
  });
  afterAll(async () => {
    await api?.close();
  });

  const marker = `marker-${randomBytes(6).toString('hex')}`;
  const sealed = async (value: unknown) =>
    (await codec.encode([defaultPayloadConverter.toPayload(value)])).map(payloadToJson);
  const valueOf = (p: JsonPayload) => defaultPayloadConverter.fromPayload(payloadFromJson(p));
  const post = (path: string) =>
    api.http.post(path).set('Content-Type', 'application/json').set('X-Namespace', api.config.TEMPORAL_NAMESPACE);

  it('decodes with the token in the path, as the Web UI calls it', async () => {
    const res = await post(`/codec/${TOKEN}/decode`).send({ payloads: await sealed({ note: marker }) });
    expect(res.status).toBe(200);
    // The protocol's own shape (not the API envelope): that is what the UI reads.
    expect(Object.keys(res.body as object)).toEqual(['payloads']);
    expect(valueOf((res.body as { payloads: JsonPayload[] }).payloads[0]!)).toEqual({ note: marker });
  });

  it('decodes with Authorization: Bearer <token>, as temporal --codec-auth sends it', async () => {
    const res = await post('/codec/decode')
      .set('Authorization', `Bearer ${TOKEN}`)
      .send({ payloads: await sealed(marker) });
    expect(res.status).toBe(200);
    expect(valueOf((res.body as { payloads: JsonPayload[] }).payloads[0]!)).toBe(marker);
  });

  it('encodes with the active key, and what it encodes decodes back', async () => {
    const plain = [payloadToJson(defaultPayloadConverter.toPayload({ note: marker }))];
    const enc = await post(`/codec/${TOKEN}/encode`).send({ payloads: plain });
    expect(enc.status).toBe(200);
    const encoded = (enc.body as { payloads: JsonPayload[] }).payloads;
    expect(JSON.stringify(encoded)).not.toContain(Buffer.from(marker).toString('base64').slice(0, 12));
    const [opened] = await codec.decode(encoded.map(payloadFromJson));
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ note: marker });
  });

  it('refuses without a token, with a wrong one, and with an ordinary user API key (401, usual envelope)', async () => {
    const payloads = await sealed(marker);
    const attempts = [
      post('/codec/decode').send({ payloads }),
      post(`/codec/${TOKEN.slice(0, -1)}x/decode`).send({ payloads }),
      post(`/codec/${TOKEN}${TOKEN}/decode`).send({ payloads }),
      post('/codec/decode').set('Authorization', 'Bearer wrong').send({ payloads }),
      // A tenant's own API key: it must not open other tenants' payloads, and nothing in a payload says whose it is.
      post('/codec/decode').set(user.auth).send({ payloads }),
      post(`/codec/${user.key}/decode`).send({ payloads }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ data: null, error: expect.stringContaining('codec token') });
      expect(JSON.stringify(res.body)).not.toContain(marker);
    }
  });

  it('checks the token before reading the body: an unauthenticated 5 MiB body is a 401, not parsed', async () => {
    const big = JSON.stringify({ payloads: [{ data: 'A'.repeat(5 * 1024 * 1024) }] });
    const res = await post('/codec/nottherighttoken/decode').send(big);
    expect(res.status).toBe(401);
  });

  it('takes payloads larger than the API body limit (a whole run snapshot), up to its own limit', async () => {
    const snapshot = { text: 'x'.repeat(api.config.BODY_LIMIT_BYTES) };
    const res = await post(`/codec/${TOKEN}/decode`).send({ payloads: await sealed(snapshot) });
    expect(res.status).toBe(200);
    expect(valueOf((res.body as { payloads: JsonPayload[] }).payloads[0]!)).toEqual(snapshot);
  });

  it('passes payloads that were never encrypted through, and names an unknown key id (422)', async () => {
    const plain = payloadToJson(defaultPayloadConverter.toPayload('old run'));
    const ok = await post(`/codec/${TOKEN}/decode`).send({ payloads: [plain] });
    expect(valueOf((ok.body as { payloads: JsonPayload[] }).payloads[0]!)).toBe('old run');

    const foreign = await new EncryptionCodec([{ id: 'retired', key: randomBytes(32) }]).encode([
      defaultPayloadConverter.toPayload(marker),
    ]);
    const res = await post(`/codec/${TOKEN}/decode`).send({ payloads: foreign.map(payloadToJson) });
    expect(res.status).toBe(422);
    expect(res.body.error).toContain('"retired"');
    expect(res.get('X-Error-Code')).toBe('codec_failed');
  });

  it('refuses a body that is not the protocol: 400 naming the field, 415 for another media type', async () => {
    const bad = await post(`/codec/${TOKEN}/decode`).send({ payloads: [{ data: 'not base64!' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('payloads[0].data');
    const text = await api.http.post(`/codec/${TOKEN}/decode`).set('Content-Type', 'text/plain').send('hi');
    expect(text.status).toBe(415);
  });

  it("answers the Web UI's CORS preflight for the UI's origin only", async () => {
    const preflight = (origin: string) =>
      api.http
        .options(`/codec/${TOKEN}/decode`)
        .set('Origin', origin)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'content-type,x-namespace');
    const fromUi = await preflight(UI);
    expect(fromUi.status).toBe(204);
    expect(fromUi.get('Access-Control-Allow-Origin')).toBe(UI);
    expect(fromUi.get('Access-Control-Allow-Methods')).toContain('POST');
    const allowed = (fromUi.get('Access-Control-Allow-Headers') ?? '').toLowerCase();
    for (const h of ['content-type', 'x-namespace', 'authorization']) expect(allowed).toContain(h);
    expect(fromUi.get('Access-Control-Allow-Credentials')).toBe('true');
    expect(fromUi.get('Vary')).toContain('Origin');

    const elsewhere = await preflight('http://evil.example');
    expect(elsewhere.get('Access-Control-Allow-Origin')).toBeUndefined();
    expect(elsewhere.get('Access-Control-Allow-Methods')).toBeUndefined();

    // The actual request's answer is readable by the UI page (and only by it).
    const payloads = await sealed(marker);
    const real = await post(`/codec/${TOKEN}/decode`).set('Origin', UI).send({ payloads });
    expect(real.get('Access-Control-Allow-Origin')).toBe(UI);
    const denied = await post('/codec/decode').set('Origin', UI).send({ payloads });
    expect(denied.status).toBe(401);
    expect(denied.get('Access-Control-Allow-Origin')).toBe(UI); // so the UI can show why
  });
});

describe('codec endpoint: off without a token, and never logged with one', () => {
  it('answers 404 on every codec path when CODEC_ACCESS_TOKEN is unset', async () => {
    const api = await startTestApi(testConfig());
    try {
      const codec = new EncryptionCodec(api.config.PAYLOAD_CODEC_KEYS);
      const payloads = (await codec.encode([defaultPayloadConverter.toPayload('x')])).map(payloadToJson);
      for (const path of ['/codec/decode', `/codec/${TOKEN}/decode`]) {
        const res = await api.http.post(path).set('Authorization', `Bearer ${TOKEN}`).send({ payloads });
        expect(res.status).toBe(404);
        expect(res.body.error).not.toContain(TOKEN);
      }
    } finally {
      await api.close();
    }
  });

  it('writes the codec path to the request log with the token redacted', async () => {
    const api = await startTestApi(testConfig({ CODEC_ACCESS_TOKEN: TOKEN }));
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    try {
      const app = createApp(
        composeApi({
          config: api.config,
          db: api.database.db,
          temporal: api.temporal,
          logger: pino({ level: 'info' }, sink),
          metrics: new Registry(),
        }),
      );
      const http = request(app.callback());
      const payload: Payload = defaultPayloadConverter.toPayload('x');
      const ok = await http.post(`/codec/${TOKEN}/decode`).send({ payloads: [payloadToJson(payload)] });
      expect(ok.status).toBe(200);
      const wrong = await http.post(`/codec/${TOKEN.slice(1)}/encode`).send({ payloads: [] });
      expect(wrong.status).toBe(401);
      const log = lines.join('');
      expect(log).toContain('/codec/[redacted]/decode');
      expect(log).toContain('/codec/[redacted]/encode');
      expect(log).not.toContain(TOKEN.slice(1, 20));
    } finally {
      await api.close();
    }
  });
});
