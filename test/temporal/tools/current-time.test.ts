/** current_time: IANA zones through Intl, offsets across DST, and a clear error for an unknown zone. */
import { NonRetryableError, toApplicationFailure } from '../../../temporal/failures';
import { currentTimeTool, describeInstant } from '../../../temporal/tools/current-time';

describe('current_time', () => {
  const instant = new Date('2026-07-01T12:34:56.789Z');

  it.each([
    ['UTC', '2026-07-01T12:34:56', '+00:00', 'Wednesday'],
    ['Europe/Paris', '2026-07-01T14:34:56', '+02:00', 'Wednesday'],
    ['America/New_York', '2026-07-01T08:34:56', '-04:00', 'Wednesday'],
    ['Asia/Kolkata', '2026-07-01T18:04:56', '+05:30', 'Wednesday'],
    ['Pacific/Kiritimati', '2026-07-02T02:34:56', '+14:00', 'Thursday'],
  ])('renders the instant in %s', (zone, local, offset, weekday) => {
    expect(describeInstant(instant, zone)).toEqual({
      iso: '2026-07-01T12:34:56.789Z',
      time_zone: zone,
      local,
      utc_offset: offset,
      weekday,
      unix_ms: instant.getTime(),
    });
  });

  it('fixes the case of a zone name', () => {
    expect(describeInstant(instant, 'europe/paris').time_zone).toBe('Europe/Paris');
  });

  it('follows daylight saving time', () => {
    expect(describeInstant(new Date('2026-01-15T12:00:00Z'), 'Europe/Paris').utc_offset).toBe('+01:00');
  });

  it('refuses an unknown zone with a non-retryable error naming it', () => {
    let caught: unknown;
    try {
      describeInstant(instant, 'Mars/Olympus_Mons');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(NonRetryableError);
    expect((caught as Error).message).toContain('Mars/Olympus_Mons');
    expect(toApplicationFailure(caught).nonRetryable).toBe(true);
  });

  it('the tool answers for now, defaulting to UTC', async () => {
    const before = Date.now();
    const out = await currentTimeTool.execute(currentTimeTool.input.parse({}));
    expect(out.time_zone).toBe('UTC');
    expect(out.unix_ms).toBeGreaterThanOrEqual(before);
    expect(new Date(out.iso).getTime()).toBe(out.unix_ms);
  });
});
