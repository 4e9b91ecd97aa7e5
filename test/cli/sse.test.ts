import { CliError } from '../../cli/errors';
import { followEventStream, SseParser, type ReconnectNotice, type SseMessage } from '../../cli/sse';
import { sendError, sseFrame, startFakeApi, startSse, type FakeApi, type FakeHandler } from '../helpers/fake-api';

describe('SseParser (EventSource framing rules)', () => {
  it('reads id, event and data, joins data lines, keeps ids across messages and counts comments', () => {
    const parser = new SseParser();
    const messages = parser.push(
      'retry: 250\n\n: ping\n\nid: 1\nevent: step.started\ndata: {"a":1}\n\ndata: line one\ndata:line two\n\n',
    );
    expect(messages).toEqual([
      { id: '1', event: 'step.started', data: '{"a":1}' },
      // No id: the last one stands (a reconnect resumes after it); no event: `message`.
      { id: '1', event: 'message', data: 'line one\nline two' },
    ]);
    expect(parser.retryMs).toBe(250);
    expect(parser.comments).toBe(1);
  });

  it('assembles frames cut anywhere, including between the CR and LF of a CRLF', () => {
    const text = 'id: 7\r\nevent: run.ended\r\ndata: {"status":"completed"}\r\n\r\nid: 8\r\ndata: x\r\n\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      const parser = new SseParser();
      const messages = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))];
      expect({ cut, messages }).toEqual({
        cut,
        messages: [
          { id: '7', event: 'run.ended', data: '{"status":"completed"}' },
          { id: '8', event: 'message', data: 'x' },
        ],
      });
    }
  });

  it('dispatches nothing for a frame without data but keeps its id; ignores unknown fields and bad retry values', () => {
    const parser = new SseParser();
    expect(parser.push('id: 41\nevent: step.started\n\nfoo: bar\nretry: soon\n\n')).toEqual([]);
    expect(parser.lastEventId).toBe('41');
    expect(parser.retryMs).toBeNull();
    // The event type of the dropped frame does not leak into the next one.
    expect(parser.push('data: y\n\n')).toEqual([{ id: '41', event: 'message', data: 'y' }]);
  });

  it('does not dispatch a frame until its blank line arrives', () => {
    const parser = new SseParser();
    expect(parser.push('id: 1\ndata: partial\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ id: '1', event: 'message', data: 'partial' }]);
  });
});

describe('followEventStream against a local HTTP server', () => {
  let api: FakeApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  const ev = (seq: number, type = 'step.started') => ({ seq, type });
  const follow = async (
    handler: FakeHandler,
    opts: { idleTimeoutMs?: number; maxFailures?: number } = {},
  ): Promise<{ messages: SseMessage[]; notices: ReconnectNotice[] }> => {
    api = await startFakeApi({ 'GET /events': handler });
    const url = `${api.url}/events`;
    const messages: SseMessage[] = [];
    const notices: ReconnectNotice[] = [];
    const stream = followEventStream({
      open: (lastEventId, signal) =>
        fetch(url, { headers: lastEventId === null ? {} : { 'Last-Event-ID': lastEventId }, signal }),
      refusal: async (res) => new CliError(`refused: ${res.status} ${await res.text()}`),
      isLast: (m) => m.event === 'run.ended',
      onReconnect: (n) => notices.push(n),
      ...opts,
    });
    for await (const m of stream) messages.push(m);
    return { messages, notices };
  };

  it('resumes a dropped connection with Last-Event-ID and stops after run.ended', async () => {
    const { messages, notices } = await follow((req, res, n) => {
      startSse(res);
      if (n === 0) {
        res.write(sseFrame(ev(1)) + ': ping\n\n' + sseFrame(ev(2, 'step.completed')));
        // The connection drops mid-run (no clean end of the response).
        setTimeout(() => res.destroy(), 20);
        return;
      }
      const after = Number(req.headers['last-event-id']);
      for (const e of [ev(3, 'step.completed'), ev(4, 'run.ended')].filter((e) => e.seq > after))
        res.write(sseFrame(e));
      // Held open: the client must stop by itself after run.ended.
    });
    expect(messages.map((m) => [m.id, m.event])).toEqual([
      ['1', 'step.started'],
      ['2', 'step.completed'],
      ['3', 'step.completed'],
      ['4', 'run.ended'],
    ]);
    const calls = api!.requestsTo('GET', '/events');
    expect(calls.map((r) => r.headers['last-event-id'])).toEqual([undefined, '2']);
    // The server's `retry:` is the delay after a connection that brought events.
    expect(notices).toEqual([expect.objectContaining({ failures: 0, delayMs: 10, lastEventId: '2' })]);
  });

  it('treats a connection silent past the idle limit as dropped (no heartbeat) and resumes', async () => {
    const { messages, notices } = await follow(
      (req, res, n) => {
        startSse(res);
        if (n === 0) res.write(sseFrame(ev(1)));
        else res.write(sseFrame(ev(2, 'run.ended')));
        // Neither closes: the first goes quiet, the second is ended by the client.
      },
      { idleTimeoutMs: 300 },
    );
    expect(messages.map((m) => m.id)).toEqual(['1', '2']);
    expect(notices[0]?.reason).toMatch(/nothing received for 300 ms/);
    expect(api!.requestsTo('GET', '/events').map((r) => r.headers['last-event-id'])).toEqual([undefined, '1']);
  });

  it('keeps a quiet stream open while heartbeats arrive within the idle limit', async () => {
    const { messages, notices } = await follow(
      (req, res) => {
        startSse(res);
        res.write(sseFrame(ev(1)));
        let beats = 0;
        // No event for 30 × 50 ms, longer than the idle limit, but a byte every 50 ms (ample margin for a slow host).
        const timer = setInterval(() => {
          if (++beats <= 30) return void res.write(': ping\n\n');
          clearInterval(timer);
          res.end(sseFrame(ev(2, 'run.ended')));
        }, 50);
      },
      { idleTimeoutMs: 1000 },
    );
    expect(messages.map((m) => m.id)).toEqual(['1', '2']);
    expect(notices).toEqual([]);
    expect(api!.requests).toHaveLength(1);
  });

  it('retries a busy server after a drop, backing off while reconnections bring nothing', async () => {
    const { messages, notices } = await follow((req, res, n) => {
      if (n === 1 || n === 2) return sendError(res, 503, 'unavailable', 'restarting');
      startSse(res);
      if (n === 0) {
        res.end(sseFrame(ev(1)));
        return;
      }
      res.write(sseFrame(ev(2, 'run.ended')));
    });
    expect(messages.map((m) => m.id)).toEqual(['1', '2']);
    expect(notices.map((n) => [n.failures, n.delayMs])).toEqual([
      [0, 10],
      [1, 10],
      [2, 20],
    ]);
    expect(notices[1]?.reason).toBe('HTTP 503');
    expect(api!.requestsTo('GET', '/events').map((r) => r.headers['last-event-id'])).toEqual([
      undefined,
      '1',
      '1',
      '1',
    ]);
  });

  it('gives up after maxFailures fruitless reconnections', async () => {
    const run = follow(
      (req, res, n) => {
        startSse(res);
        res.end(n === 0 ? sseFrame(ev(1)) : '');
      },
      { maxFailures: 3 },
    );
    await expect(run).rejects.toThrow(/3 reconnections brought nothing; giving up/);
    expect(api!.requestsTo('GET', '/events')).toHaveLength(4);
  });

  it('does not retry a refusal (a 404 envelope), and a first connection that fails is final', async () => {
    await expect(follow((req, res) => sendError(res, 404, 'not_found', 'run x not found'))).rejects.toThrow(
      'refused: 404 {"data":null,"error":"run x not found"}',
    );
    expect(api!.requests).toHaveLength(1);
    await api!.close();

    await expect(follow((req, res) => sendError(res, 503, 'unavailable', 'down'))).rejects.toThrow(/refused: 503/);
    expect(api!.requests).toHaveLength(1);
  });

  it('refuses an answer that is not an event stream', async () => {
    await expect(
      follow((req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end('<html>proxy login</html>');
      }),
    ).rejects.toThrow('the event stream answered with text/html');
  });
});
