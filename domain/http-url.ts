/**
 * The one shape of every http(s) URL a user or a model gives Stepwise: MCP servers, completion webhooks
 * (`callback_url`), `http_request` steps and the `http_fetch` tool. One pattern states it all, so the OpenAPI
 * document says exactly what the server takes: `http` or `https`, then a host — a name whose last label starts with a
 * letter (never read as an IPv4 number), a dotted IPv4 address, or an IPv6 address in brackets — an optional port,
 * then anything printable after `/`, `?` or `#`. No credentials, no empty host (`http:///x`, which URL parsers read
 * as the host `x`), no odd IPv4 spellings (`0x7f.1`, `2130706433`).
 *
 * The shape decides nothing about *where* a URL may point: the SSRF guard does, on the resolved address of every
 * request (domain/address-policy.ts, temporal/net/guarded-fetch.ts), and for a literal address at a run's start
 * (api/commands/callback-url.ts).
 */
import { z } from 'zod';

/** The longest URL accepted. */
export const MAX_URL_LENGTH = 2048;

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
// A last label starting with a letter is never read as an IPv4 number by URL parsers.
const NAME = `(?:${LABEL}\\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?`;
const PORT = '(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?';

/**
 * RFC 4291's text forms, exactly (a looser pattern would let a fuzzer reading the document send a host no parser
 * takes): eight groups, or `::` standing for at least one group with k groups before it and at most 7 − k after; the
 * same with a dotted IPv4 address as the last two groups. No zone id (`%eth0`): URLs cannot carry one.
 */
function ipv6Pattern(): string {
  const h = '[0-9A-Fa-f]{1,4}';
  const forms = [`(?:${h}:){7}${h}`, `(?:${h}:){6}${IPV4}`];
  for (let before = 0; before <= 7; before++) {
    const head = before === 0 ? '' : `${h}(?::${h}){${before - 1}}`;
    const after = 7 - before;
    forms.push(after === 0 ? `${head}::` : `${head}::(?:(?:${h}:){0,${after - 1}}${h})?`);
    if (before <= 5) forms.push(`${head}::(?:${h}:){0,${5 - before}}${IPV4}`);
  }
  return `(?:${forms.join('|')})`;
}

export const HTTP_URL_PATTERN = new RegExp(
  `^[Hh][Tt][Tt][Pp][Ss]?://(?:${NAME}|${IPV4}|\\[${ipv6Pattern()}\\])${PORT}(?:[/?#][!-~]*)?$`,
);

function parsesAsUrl(value: string): boolean {
  return URL.canParse(value);
}

/** `user:pass@` (or a bare `@`) before the host; the pattern refuses it too, this says why. */
function hasCredentials(value: string): boolean {
  return /^[A-Za-z]+:\/\/[^/?#]*@/.test(value);
}

/**
 * The URL schema; `credentialsHint` ends the message of a URL with credentials (where they go instead). Every field
 * adds its own description with `.meta()`.
 */
export function httpUrl(credentialsHint = 'no credentials in the URL'): z.ZodString {
  return (
    z
      .string()
      .max(MAX_URL_LENGTH)
      .refine((value) => !hasCredentials(value), credentialsHint)
      .regex(
        HTTP_URL_PATTERN,
        'must be an http or https URL: a host name, an IPv4 address or an [IPv6] address, an optional port, ' +
          'then a path',
      )
      // The one rule the pattern leaves out: a host of invalid punycode (`xn--…`) that no URL parser takes.
      .refine(parsesAsUrl, 'must be an http or https URL whose host is valid (punycode included)')
  );
}
