/**
 * The start-time check of a completion webhook URL: a literal IP address the SSRF policy refuses (loopback, private,
 * link-local, metadata…) is a 400 now rather than a delivery that can only fail. Host names are not resolved here:
 * DNS answers change, so the worker checks the resolved address at every attempt (temporal/net/guarded-fetch.ts).
 * HTTP_ALLOWED_HOSTS exempts hosts exactly as it does for HTTP steps.
 */
import { isIP } from 'node:net';
import { isAllowedHost, normalHost, refusedRange } from '../../domain/address-policy';
import { BadRequestError } from '../http/errors';

export function checkCallbackUrl(value: string | undefined, allowedHosts: readonly string[], field: string): void {
  if (value === undefined) return;
  // The schema has checked the shape (http/https, no credentials, length).
  const url = new URL(value);
  const host = normalHost(url.hostname);
  if (isIP(host) === 0 || isAllowedHost(url, allowedHosts)) return;
  const range = refusedRange(host);
  if (range !== null) {
    throw new BadRequestError(
      `${field}: ${host} is a non-public address (${range}); webhooks are delivered to public addresses only`,
      'invalid_field',
    );
  }
}
