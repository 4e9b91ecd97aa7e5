/** send_email action: the message a real SMTP server receives, and a Message-ID stable per run + step. */
import { validateActionConfig } from '../../../domain/actions/catalog';
import { ACTIONS } from '../../../temporal/actions/registry';
import { toApplicationFailure } from '../../../temporal/failures';
import { actionContext } from '../../helpers/effects-context';
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp';

let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startTestSmtp({
    rcptReply: (address) => {
      if (address.startsWith('gone')) return { code: 550, message: 'Mailbox unavailable' };
      if (address.startsWith('busy')) return { code: 451, message: 'Try again later' };
      return undefined;
    },
  });
});
afterAll(() => smtp.close());

function runConfig(config: unknown) {
  const checked = validateActionConfig('send_email', config, 'run');
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  return checked.value;
}

describe('send_email action', () => {
  const action = ACTIONS.send_email;

  it('sends to, cc, bcc, reply-to, subject, text and html', async () => {
    const ctx = actionContext({ smtpUrl: smtp.url });
    const before = smtp.messages.length;
    const out = await action.execute(
      runConfig({
        to: ['ada@example.com', 'alan@example.com'],
        cc: 'grace@example.com',
        bcc: 'hidden@example.com',
        reply_to: 'replies@example.com',
        subject: 'Weekly report — ✓',
        text: 'Plain body',
        html: '<p>HTML body</p>',
      }),
      ctx,
    );
    expect(out.accepted.sort()).toEqual(
      ['ada@example.com', 'alan@example.com', 'grace@example.com', 'hidden@example.com'].sort(),
    );
    expect(out.rejected).toEqual([]);
    const mail = (await smtp.waitForMessages(before + 1))[before]!;
    expect(mail.parsed.subject).toBe('Weekly report — ✓');
    expect(mail.parsed.text?.trim()).toBe('Plain body');
    expect(mail.parsed.html).toContain('<p>HTML body</p>');
    expect(mail.parsed.headers.get('reply-to')).toMatchObject({ value: [{ address: 'replies@example.com' }] });
    expect(mail.parsed.cc).toMatchObject({ value: [{ address: 'grace@example.com' }] });
    // Bcc travels in the envelope only, never in the headers.
    expect(mail.envelope.to).toContain('hidden@example.com');
    expect(mail.raw.toString()).not.toContain('hidden@example.com');
    expect(mail.messageId).toBe(out.message_id);
  });

  it('uses the same Message-ID for every attempt of a step, and another for another step', async () => {
    const before = smtp.messages.length;
    const config = runConfig({ to: 'ada@example.com', subject: 'retry me', text: 'x' });
    const first = actionContext({ smtpUrl: smtp.url }, { runId: 'run_same', stepId: 'notify' });
    const retry = actionContext({ smtpUrl: smtp.url }, { runId: 'run_same', stepId: 'notify' });
    const other = actionContext({ smtpUrl: smtp.url }, { runId: 'run_same', stepId: 'notify2' });
    await action.execute(config, first);
    await action.execute(config, retry);
    await action.execute(config, other);
    const mails = (await smtp.waitForMessages(before + 3)).slice(before);
    expect(mails[0]!.messageId).toMatch(/^<[0-9a-f]{40}@example\.com>$/);
    expect(mails[1]!.messageId).toBe(mails[0]!.messageId);
    expect(mails[2]!.messageId).not.toBe(mails[0]!.messageId);
  });

  it('a permanent rejection (550) is non-retryable, a transient one (451) retryable', async () => {
    const ctx = actionContext({ smtpUrl: smtp.url });
    const permanent: unknown = await action
      .execute(runConfig({ to: 'gone@example.com', subject: 's', text: 't' }), ctx)
      .catch((e: unknown) => e);
    expect(toApplicationFailure(permanent)).toMatchObject({ type: 'smtp_rejected', nonRetryable: true });
    const transient: unknown = await action
      .execute(runConfig({ to: 'busy@example.com', subject: 's', text: 't' }), ctx)
      .catch((e: unknown) => e);
    expect(toApplicationFailure(transient)).toMatchObject({ type: 'smtp_unavailable', nonRetryable: false });
  });

  it('an unreachable SMTP server is retryable', async () => {
    const closed = await startTestSmtp();
    await closed.close();
    const err: unknown = await action
      .execute(runConfig({ to: 'ada@example.com', subject: 's', text: 't' }), actionContext({ smtpUrl: closed.url }))
      .catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ nonRetryable: false });
  });

  it('run mode requires a body; template mode accepts references and partial configs', () => {
    expect(validateActionConfig('send_email', { to: 'a@example.com', subject: 's' }, 'run')).toEqual({
      ok: false,
      issues: [{ path: 'text', message: 'text or html is required' }],
    });
    expect(validateActionConfig('send_email', { to: '{{input.email}}' }, 'template').ok).toBe(true);
  });
});
