/**
 * The SSRF address policy's verdicts as pure functions, for every range: nothing here opens a socket, so the suite can
 * name any address. Code that connects is only ever handed loopback addresses (test/temporal/net/guarded-fetch.test.ts),
 * and proves there that every hop goes through these verdicts before a connection is made.
 */
import { isAllowedHost, normalHost, refusedRange } from '../../domain/address-policy';

/** The verdict for a URL's host as the guard reaches it: WHATWG parsing (odd IPv4 spellings), then normalHost. */
const verdictOf = (url: string) => refusedRange(normalHost(new URL(url).hostname));

describe('refusedRange: IPv4', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'], // 0.0.0.0/8, "this network"
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'linkLocal'], // the cloud metadata address
    ['169.254.0.1', 'linkLocal'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['192.168.255.255', 'private'],
    ['192.0.0.8', 'reserved'], // IETF protocol assignments
    ['192.0.2.1', 'reserved'], // TEST-NET-1
    ['192.88.99.1', 'reserved'], // 6to4 relay anycast
    ['198.18.0.1', 'reserved'], // benchmarking
    ['198.51.100.1', 'reserved'], // TEST-NET-2
    ['203.0.113.1', 'reserved'], // TEST-NET-3
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ])('refuses %s (%s)', (ip, range) => {
    expect(refusedRange(ip)).toBe(range);
  });

  // The edges of the refused ranges, just outside them.
  it.each(['8.8.8.8', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.1'])(
    'allows public %s',
    (ip) => {
      expect(refusedRange(ip)).toBeNull();
    },
  );
});

describe('refusedRange: IPv6', () => {
  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'ipv4Mapped'],
    ['::ffff:10.0.0.1', 'ipv4Mapped'],
    ['::ffff:8.8.8.8', 'ipv4Mapped'], // even a public IPv4 inside: the mapped form is never needed
    ['::7f00:1', 'ipv4Compatible'],
    ['64:ff9b::7f00:1', 'rfc6052'], // NAT64
    ['64:ff9b::a9fe:a9fe', 'rfc6052'],
    ['64:ff9b:1::1', 'rfc6052'], // local-use NAT64
    ['100::1', 'discard'],
    ['2001::1', 'teredo'],
    ['2001:10::1', 'deprecatedOrchid'],
    ['2001:20::1', 'orchid2'],
    ['2001:db8::1', 'reserved'], // documentation
    ['2002:7f00:1::', '6to4'],
    ['2002:a9fe:a9fe::', '6to4'],
    ['fc00::1', 'uniqueLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    ['4000::1', 'reserved'], // outside 2000::/3
    ['not-an-ip', 'invalid'],
  ])('refuses %s (%s)', (ip, range) => {
    expect(refusedRange(ip)).toBe(range);
  });

  it.each(['2606:4700:4700::1111', '2a00:1450:4001::1'])('allows public %s', (ip) => {
    expect(refusedRange(ip)).toBeNull();
  });
});

describe('a URL host as the guard reads it', () => {
  it.each([
    // Every spelling a URL parser reads as an IPv4 number.
    ['http://2130706433/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://017700000001/', 'loopback'],
    ['http://0x7f.0.0.1/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://0/', 'unspecified'],
    ['http://167772161/', 'private'], // 10.0.0.1
    ['http://0xa.0.0.1/', 'private'],
    ['http://012.0.0.1/', 'private'],
    ['http://2852039166/', 'linkLocal'], // 169.254.169.254
    ['http://0xa9.0xfe.0xa9.0xfe/', 'linkLocal'],
    ['http://0251.0376.0251.0376/', 'linkLocal'],
    ['http://169.254.43518/', 'linkLocal'],
    ['http://0xc0a80001/', 'private'], // 192.168.0.1
    ['http://192.168.1/', 'private'],
    ['http://0254.0020.0.1/', 'private'], // 172.16.0.1
    ['http://100.64.1/', 'carrierGradeNat'],
    ['http://3758096385/', 'multicast'], // 224.0.0.1
    // IPv6 in brackets, every form of an internal IPv4 inside.
    ['http://[::1]/', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'ipv4Mapped'],
    ['http://[::ffff:7f00:1]/', 'ipv4Mapped'],
    ['http://[::ffff:169.254.169.254]/', 'ipv4Mapped'],
    ['http://[::127.0.0.1]/', 'ipv4Compatible'],
    ['http://[64:ff9b::169.254.169.254]/', 'rfc6052'],
    ['http://[2002:a9fe:a9fe::1]/', '6to4'],
    ['http://[fd00::1]/', 'uniqueLocal'],
    ['http://[FE80::1]/', 'linkLocal'],
    // A trailing dot is the same host.
    ['http://127.0.0.1./', 'loopback'],
  ])('%s is refused (%s)', (url, range) => {
    expect(verdictOf(url)).toBe(range);
  });

  it('a host name is no address: the guard resolves it and judges every answer', () => {
    expect(verdictOf('http://metadata.google.internal/')).toBe('invalid');
    expect(normalHost('Metadata.Google.Internal.')).toBe('metadata.google.internal');
  });
});

describe('isAllowedHost: HTTP_ALLOWED_HOSTS exempts exactly its entries', () => {
  const allowed = ['internal.svc', '10.0.0.5:8443', '[fd00::1]', '127.0.0.1:3000'];
  it.each([
    ['http://internal.svc/', true],
    ['http://INTERNAL.svc.:81/', true],
    ['https://10.0.0.5:8443/', true],
    ['https://10.0.0.5/', false], // another port
    ['http://167772165:8443/', true], // 10.0.0.5 spelled as one number
    ['http://[fd00:0::1]:9/', true],
    ['http://[fd00::2]/', false],
    ['http://127.0.0.1:3000/', true],
    ['http://127.0.0.1:3001/', false],
    ['http://localhost:3000/', false], // names are compared as written, not resolved
    ['http://other.svc/', false],
  ])('%s → %s', (url, verdict) => {
    expect(isAllowedHost(new URL(url), allowed)).toBe(verdict);
  });
});
