/**
 * HTTP_ALLOWED_HOSTS is parsed strictly: an entry with a port that is not a number once read as "this host, any
 * port", silently opening every port of an internal host. Malformed entries now stop the process at start.
 */
import { ConfigError, loadConfig } from '../../../config';
import { isAllowedHost, parseHostEntry } from '../../../domain/address-policy';

describe('HTTP_ALLOWED_HOSTS entries', () => {
  it.each([
    ['internal.svc', { host: 'internal.svc', port: null }],
    ['internal.svc:8080', { host: 'internal.svc', port: 8080 }],
    ['10.0.0.5:443', { host: '10.0.0.5', port: 443 }],
    ['[::1]:3000', { host: '::1', port: 3000 }],
    ['[fd00::1]', { host: 'fd00::1', port: null }],
    ['fd00::1', { host: 'fd00::1', port: null }],
    ['Sink.Local.', { host: 'sink.local', port: null }],
  ])('%s parses', (entry, expected) => {
    expect(parseHostEntry(entry)).toEqual(expected);
  });

  it.each([
    'internal.svc:abc',
    'internal.svc:',
    'internal.svc:0',
    'internal.svc:70000',
    'internal.svc:80x',
    '[::1]:http',
    '[not-v6]',
    'http://internal.svc',
    'internal.svc/path',
    '*.internal.svc',
    'a b',
    'fd00::zz',
  ])('%s is refused with a reason', (entry) => {
    const parsed = parseHostEntry(entry);
    expect(parsed).toHaveProperty('problem');
  });

  it('a malformed entry stops the configuration, naming it', () => {
    expect(() => loadConfig({ HTTP_ALLOWED_HOSTS: 'ok.svc:80,internal.svc:abc' })).toThrow(ConfigError);
    try {
      loadConfig({ HTTP_ALLOWED_HOSTS: 'ok.svc:80,internal.svc:abc' });
    } catch (err) {
      expect((err as ConfigError).problems.join('\n')).toMatch(/HTTP_ALLOWED_HOSTS.*internal\.svc:abc.*port/);
    }
    expect(loadConfig({ HTTP_ALLOWED_HOSTS: 'ok.svc:80, [::1]:3000' }).HTTP_ALLOWED_HOSTS).toEqual([
      'ok.svc:80',
      '[::1]:3000',
    ]);
  });

  it('a malformed entry that reaches the check allows no port at all', () => {
    for (const port of ['80', '443', '6379', '8080']) {
      expect(isAllowedHost(new URL(`http://internal.svc:${port}/`), ['internal.svc:abc'])).toBe(false);
    }
    expect(isAllowedHost(new URL('http://internal.svc:8080/'), ['internal.svc:8080'])).toBe(true);
    expect(isAllowedHost(new URL('http://internal.svc:8081/'), ['internal.svc:8080'])).toBe(false);
  });
});
