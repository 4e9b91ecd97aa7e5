/**
 * A Server-Sent Events reader for `runs watch`: the parser follows the WHATWG EventSource rules (`id:`, `event:`,
 * `data:`, `retry:`, `:` comments, any line ending), and `followEventStream` reconnects after a dropped connection
 * with `Last-Event-ID`, so the server sends exactly the events missed, until the caller's last event arrives.
 */
import { CliError } from './errors';

export interface SseMessage {
  /** The last `id:` seen (ids persist across messages, as in EventSource); null before any. */
  id: string | null;
  /** `event:`, or `message` when the frame had none. */
  event: string;
  data: string;
}

/** Incremental parser: feed it text as it arrives, in chunks cut anywhere. */
export class SseParser {
  /** The id a reconnect resumes after. */
  lastEventId: string | null = null;
  /** The server's `retry:` (ms), if it sent one. */
  retryMs: number | null = null;
  /** Comment lines seen (`: ping`): proof the connection is alive even when nothing happens. */
  comments = 0;
  private pending = '';
  private skipLf = false;
  private data: string[] = [];
  private event = '';

  push(chunk: string): SseMessage[] {
    let text = chunk;
    // A CR at the end of the previous chunk may be the first half of a CRLF.
    if (this.skipLf && text.startsWith('\n')) text = text.slice(1);
    this.skipLf = false;
    const out: SseMessage[] = [];
    const lines = (this.pending + text).split(/\r\n|\r|\n/);
    this.pending = lines.pop() ?? '';
    if (this.pending === '' && text.endsWith('\r')) this.skipLf = true;
    for (const line of lines) {
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) {
      this.comments++;
      return null;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default: // unknown fields are ignored, as the standard says
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const { data, event } = this;
    this.data = [];
    this.event = '';
    if (data.length === 0) return null;
    return { id: this.lastEventId, event: event || 'message', data: data.join('\n') };
  }
}

export interface ReconnectNotice {
  /** Consecutive connections that brought nothing (0 after a connection that did). */
  failures: number;
  delayMs: number;
  lastEventId: string | null;
  reason: string;
}

export interface FollowOptions {
  /** Opens one connection; `lastEventId` goes in the `Last-Event-ID` header when not null. */
  open(lastEventId: string | null, signal: AbortSignal): Promise<Response>;
  /** The CliError for a refused connection (a 401 or 404 envelope): such answers are final, never retried. */
  refusal(res: Response): Promise<Error>;
  /** True for the message after which the stream is done (`run.ended`). */
  isLast(message: SseMessage): boolean;
  /** First reconnection delay when the server sent no `retry:`; doubles per fruitless attempt. */
  initialRetryMs?: number;
  maxRetryMs?: number;
  /** Consecutive fruitless connections before giving up. */
  maxFailures?: number;
  /** No byte (not even a heartbeat) for this long: the connection is dead though no one closed it. */
  idleTimeoutMs?: number;
  onReconnect?(notice: ReconnectNotice): void;
}

/** Statuses worth retrying: the server is busy, restarting, or out of stream slots for a moment. */
function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Yields a stream's messages across reconnections, ending after the message `isLast` accepts. A first connection
 * that fails is final (a wrong URL or key should not make the CLI wait); once a stream has been read, drops are
 * retried with backoff and `Last-Event-ID`, up to `maxFailures` fruitless attempts in a row.
 */
export async function* followEventStream(opts: FollowOptions): AsyncGenerator<SseMessage, void, undefined> {
  const parser = new SseParser();
  const initial = opts.initialRetryMs ?? 1000;
  const maxRetry = opts.maxRetryMs ?? 30_000;
  const maxFailures = opts.maxFailures ?? 10;
  // The server sends a heartbeat every 15 s; three missed ones mean the connection is gone.
  const idleMs = opts.idleTimeoutMs ?? 45_000;
  let connected = false;
  let failures = 0;
  // Answers that end the follow at once (refusals); anything else thrown while connecting or reading is a drop.
  const final = new WeakSet<object>();
  const fatal = (err: Error) => (final.add(err), err);

  for (;;) {
    const abort = new AbortController();
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => abort.abort(new Error(`nothing received for ${idleMs} ms`)), idleMs);
    };
    let delivered = 0;
    let reason: string;
    try {
      arm();
      const res = await opts.open(parser.lastEventId, abort.signal);
      if (!res.ok) {
        if (!retryable(res.status) || !connected) throw fatal(await opts.refusal(res));
        await res.body?.cancel();
        reason = `HTTP ${res.status}`;
      } else if (!(res.headers.get('Content-Type') ?? '').startsWith('text/event-stream')) {
        await res.body?.cancel();
        throw fatal(
          new CliError(`the event stream answered with ${res.headers.get('Content-Type') ?? 'no content type'}`),
        );
      } else {
        connected = true;
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          arm();
          const { value, done } = await reader.read();
          if (done) break;
          for (const message of parser.push(value)) {
            delivered++;
            yield message;
            if (opts.isLast(message)) {
              abort.abort();
              return;
            }
          }
        }
        reason = 'the server closed the stream';
      }
    } catch (err) {
      if (final.has(err as object) || (!connected && err instanceof CliError)) throw err;
      // A network failure or the idle abort: the stream dropped.
      const cause = abort.signal.aborted ? (abort.signal.reason as Error) : (err as Error);
      if (!connected) throw new CliError(`cannot open the event stream: ${cause.message}`);
      reason = cause.message;
    } finally {
      clearTimeout(idle);
      abort.abort();
    }
    failures = delivered > 0 ? 0 : failures + 1;
    if (failures >= maxFailures) {
      throw new CliError(`lost the event stream (${reason}) and ${failures} reconnections brought nothing; giving up`);
    }
    const base = parser.retryMs ?? initial;
    const delayMs = Math.min(maxRetry, base * 2 ** Math.max(0, failures - 1));
    opts.onReconnect?.({ failures, delayMs, lastEventId: parser.lastEventId, reason });
    await sleep(delayMs);
  }
}
