/** send_email tool through nodemailer to a real SMTP server. */
import { toApplicationFailure } from '../../../temporal/failures';
import { messageIdFor } from '../../../temporal/mail/message';
import { sendEmailTool } from '../../../temporal/tools/send-email';
import { TEST_FROM, toolContext } from '../../helpers/effects-context';
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp';

let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startTestSmtp({
    rcptReply: (address) => (address.startsWith('bounce') ? { code: 550, message: 'No such user' } : undefined),
  });
});
afterAll(() => smtp.close());

describe('send_email tool', () => {
  it('delivers the message with a Message-ID derived from the call key', async () => {
    const ctx = toolContext(
      { smtpUrl: smtp.url },
      { egress: { email_recipients: ['@example.com'], http_hosts: null } },
    );
    const out = await sendEmailTool.execute(
      sendEmailTool.input.parse({ to: 'ada@example.com', subject: 'From the agent', text: 'Body text' }),
      ctx,
    );
    expect(out.accepted).toEqual(['ada@example.com']);
    expect(out.message_id).toBe(messageIdFor(ctx.idempotencyKey, TEST_FROM));
    const [mail] = await smtp.waitForMessages(1);
    expect(mail?.messageId).toBe(out.message_id);
    expect(mail?.parsed.subject).toBe('From the agent');
    expect(mail?.parsed.text?.trim()).toBe('Body text');
    expect(mail?.parsed.from?.value[0]?.address).toBe('stepwise@example.com');
  });

  it('a permanently rejected recipient is a non-retryable failure', async () => {
    const err: unknown = await sendEmailTool
      .execute(
        sendEmailTool.input.parse({ to: 'bounce@example.com', subject: 'x', text: 'y' }),
        toolContext({ smtpUrl: smtp.url }, { egress: { email_recipients: ['@example.com'], http_hosts: null } }),
      )
      .catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ nonRetryable: true });
  });

  it('refuses header injection and unknown fields in its schema', () => {
    expect(
      sendEmailTool.input.safeParse({ to: 'a@example.com', subject: 'a\r\nBcc: x@example.com', text: 'y' }).success,
    ).toBe(false);
    expect(
      sendEmailTool.input.safeParse({ to: 'a@example.com', subject: 'a', text: 'y', from: 'x@example.com' }).success,
    ).toBe(false);
  });
});
