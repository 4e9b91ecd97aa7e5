/** The SMTP transport shared by the send_email action and tool: one nodemailer transport per worker, passed in. */
import nodemailer, { type Transporter } from 'nodemailer';

export interface Mailer {
  transport: Transporter;
  from: string;
}

export function createMailer(smtpUrl: string, from: string): Mailer {
  return { transport: nodemailer.createTransport(smtpUrl), from };
}
