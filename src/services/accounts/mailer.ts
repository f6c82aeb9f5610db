import nodemailer from 'nodemailer';
import type { Logger } from '../../logger';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/**
 * SMTP through nodemailer when `SMTP_URL` is set; otherwise the mail (and so the verification
 * link) is written to the log, which is what a local or test deployment needs.
 */
export function createMailer(options: { smtpUrl?: string; from: string }, log: Logger): Mailer {
  if (!options.smtpUrl) {
    return {
      send: async (mail) => {
        log.info({ mail }, 'mail not sent (SMTP_URL is not set)');
      },
    };
  }
  const transport = nodemailer.createTransport(options.smtpUrl);
  return {
    send: async (mail) => {
      await transport.sendMail({ from: options.from, ...mail });
    },
  };
}
