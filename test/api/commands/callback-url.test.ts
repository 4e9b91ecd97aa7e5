/**
 * The start-time check of a callback URL (api/commands/callback-url.ts) as the pure function it is: a literal address
 * in any refused range is a 400, IPv6 literals included; a name waits for the worker's resolution; HTTP_ALLOWED_HOSTS
 * exempts. Nothing here connects, so any address may be named (test/api/webhooks.test.ts sends loopback ones only).
 */
import { checkCallbackUrl } from '../../../api/commands/callback-url';

const refusal = (url: string, allowed: readonly string[] = []): string | null => {
  try {
    checkCallbackUrl(url, allowed, 'callback_url');
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

describe('checkCallbackUrl', () => {
  it.each([
    ['http://127.0.0.1:9/hook', 'loopback'],
    ['http://10.1.2.3/x', 'private'],
    ['http://172.16.0.1/x', 'private'],
    ['http://192.168.0.1/x', 'private'],
    ['http://169.254.169.254/latest', 'linkLocal'],
    ['http://100.64.0.1/', 'carrierGradeNat'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://[::1]:8080/hook', 'loopback'],
    ['http://[::ffff:10.0.0.1]/', 'ipv4Mapped'],
    ['http://[fd00::1]/', 'uniqueLocal'],
    ['http://[fe80::1]/', 'linkLocal'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'rfc6052'],
    ['http://[2002:a00:1::]/', '6to4'],
  ])('refuses %s (%s)', (url, range) => {
    expect(refusal(url)).toMatch(/^callback_url: \S+ is a non-public address \(\w+\); webhooks are delivered/);
    expect(refusal(url)).toContain(`(${range})`);
  });

  it.each([
    'https://hooks.example.com/x',
    'http://8.8.8.8/x',
    'https://[2606:4700:4700::1111]/x',
    'http://localhost:9/x',
  ])('leaves %s to the worker (a public address, or a name it resolves at each attempt)', (url) => {
    expect(refusal(url)).toBeNull();
  });

  it('lets HTTP_ALLOWED_HOSTS exempt a private literal, IPv6 included', () => {
    expect(refusal('http://10.1.2.3:8080/x', ['10.1.2.3:8080'])).toBeNull();
    expect(refusal('http://[fd00::1]/x', ['[fd00::1]'])).toBeNull();
  });
});
