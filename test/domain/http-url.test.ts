/**
 * The one URL shape (domain/http-url.ts) of MCP servers, callback URLs, `http_request` and `http_fetch`: IPv6 literals
 * are URLs like any other (where they may point is the SSRF guard's call), an empty host is not, and the pattern the
 * document publishes takes exactly what a URL parser takes.
 */
import fc from 'fast-check';
import { HTTP_URL_PATTERN, httpUrl } from '../../domain/http-url';

const schema = httpUrl();
const problems = (value: string) => {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
};

describe('httpUrl', () => {
  it.each([
    'http://[::1]:8080/mcp',
    'https://[2001:db8::1]/x',
    'http://[::ffff:127.0.0.1]/',
    'http://[1:2:3:4:5:6:7:8]:65535/?q#f',
    'http://127.0.0.1:3000/hook',
    'https://mcp.example.com/mcp',
    'HTTP://LOCALHOST',
  ])('takes %s', (url) => {
    expect(problems(url)).toEqual([]);
  });

  it.each([
    ['http:///mcp', /must be an http or https URL/],
    ['https://', /must be an http or https URL/],
    ['http://[::1', /must be an http or https URL/],
    ['http://[1::2::3]/', /must be an http or https URL/],
    ['http://[fe80::1%25eth0]/', /must be an http or https URL/],
    ['http://0x7f.0.0.1/', /must be an http or https URL/],
    ['http://2130706433/', /must be an http or https URL/],
    ['ftp://a.example.com/', /must be an http or https URL/],
    ['https://user:pw@a.example.com/', /no credentials in the URL/],
    ['https://xn--a.com/', /punycode/],
  ])('refuses %s', (url, message) => {
    expect(problems(url).join(' | ')).toMatch(message);
  });

  it('names where credentials go when the field says so', () => {
    const parsed = httpUrl('no credentials in the URL: put them in auth').safeParse('https://u:p@a.example.com/');
    expect(parsed.error?.issues[0]?.message).toBe('no credentials in the URL: put them in auth');
  });

  it('the pattern takes a bracketed host exactly when a URL parser does', () => {
    const bracketed = fc.oneof(
      fc.ipV6(),
      fc.stringMatching(/^[0-9a-f:.]{0,45}$/),
      fc.ipV4().map((v4) => `::ffff:${v4}`),
    );
    fc.assert(
      fc.property(bracketed, (host) => {
        const url = `http://[${host}]/`;
        expect({ url, pattern: HTTP_URL_PATTERN.test(url) }).toEqual({ url, pattern: URL.canParse(url) });
      }),
      { numRuns: 2000 },
    );
  });
});
