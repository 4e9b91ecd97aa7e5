/**
 * A real SMTP server (smtp-server) on a free 127.0.0.1 port that collects every message, parsed with mailparser.
 * Use `url` as SMTP_URL. `rcptReply` scripts refusals (e.g. 550 permanent, 451 transient) per recipient.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** SMTP envelope (MAIL FROM / RCPT TO), which includes bcc recipients. */
  envelope: { from: string | null; to: string[] };
  parsed: ParsedMail;
  /** Message-ID header as received, with angle brackets. */
  messageId: string | undefined;
  raw: Buffer;
}

export interface SmtpReply {
  code: number;
  message: string;
}

export interface TestSmtpOptions {
  /** Called for each RCPT TO; a reply refuses that recipient with the given SMTP code. */
  rcptReply?: (address: string) => SmtpReply | undefined;
}

export interface TestSmtp {
  url: string;
  port: number;
  readonly messages: ReceivedMail[];
  /** Resolves once at least `n` messages arrived; rejects after `timeoutMs`. */
  waitForMessages(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

function smtpError(reply: SmtpReply): Error {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

export async function startTestSmtp(options: TestSmtpOptions = {}): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const notify = (): void => waiters.forEach((w) => w());

  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no certificate to manage, and nodemailer does not attempt STARTTLS.
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const reply = options.rcptReply?.(address.address);
      callback(reply ? smtpError(reply) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', callback);
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw)
          .then((parsed) => {
            const from = session.envelope.mailFrom;
            messages.push({
              envelope: {
                from: from === false ? null : from.address,
                to: session.envelope.rcptTo.map((r) => r.address),
              },
              parsed,
              messageId: parsed.messageId,
              raw,
            });
            notify();
            callback();
          })
          .catch((err: Error) => callback(err));
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // A client that vanishes mid-session (a worker killed while sending) resets its connection; like a real SMTP server,
  // this one goes on serving the others. Without a listener, the 'error' event would end the test process.
  server.on('error', () => undefined);
  const port = (server.server.address() as AddressInfo).port;

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    waitForMessages(n, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (messages.length >= n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(messages.slice());
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`SMTP server: expected ${n} message(s) within ${timeoutMs} ms, got ${messages.length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
