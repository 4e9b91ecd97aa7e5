/**
 * The request line (api/middleware/request-context.ts): one per request, with its id and the fields bound to it
 * (bindLog), whether or not the handler logged through `ctx.state.log` (whose child logger is made only then and
 * carries the same fields).
 */
import { Writable } from 'node:stream';
import http from 'node:http';
import Koa from 'koa';
import pino from 'pino';
import { requestContext } from '../../api/middleware/request-context';

describe('request log', () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = new Koa();
  app.use(requestContext(pino({ level: 'info' }, sink)));
  app.use((ctx) => {
    ctx.state.bindLog({ user_id: 'usr_logged' });
    if (ctx.path === '/talks') ctx.state.log.info({ extra: 1 }, 'handler says');
    ctx.body = { ok: true };
  });
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    const handle = app.callback();
    server = http.createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('logs every request with its id, and the handler lines with the same id', async () => {
    const quiet = await fetch(`${base}/quiet`, { headers: { 'X-Request-Id': 'req-quiet-1' } });
    const talks = await fetch(`${base}/talks`, { headers: { 'X-Request-Id': 'req-talks-1' } });
    expect([quiet.headers.get('x-request-id'), talks.headers.get('x-request-id')]).toEqual([
      'req-quiet-1',
      'req-talks-1',
    ]);
    await new Promise((r) => setImmediate(r));
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines).toEqual([
      expect.objectContaining({ request_id: 'req-quiet-1', user_id: 'usr_logged', path: '/quiet', status: 200 }),
      expect.objectContaining({ request_id: 'req-talks-1', user_id: 'usr_logged', path: '/talks', status: 200 }),
    ]);
    expect(lines.filter((l) => l.msg === 'handler says')).toEqual([
      expect.objectContaining({ request_id: 'req-talks-1', user_id: 'usr_logged', extra: 1 }),
    ]);
  });
});
