/**
 * The counted benchmark rows (bench/counted.ts) compare measured round trips with the lists in docs/benchmarks.md:
 * the lists must parse as the bench reads them (prettier pads the tables), and a round trip beyond its row, or with
 * none, must fail the row.
 */
import { documentedRoundTrips, unexplainedRoundTrips } from '../../bench/counted';

describe('counted benchmark rows', () => {
  it('reads C1, C2a and C2b from docs/benchmarks.md, with exactly one Temporal call per run start', () => {
    const doc = documentedRoundTrips();
    expect([...doc.keys()].sort()).toEqual(['C1', 'C2a', 'C2b']);
    const temporal = [...doc.get('C1')!].filter(([k]) => k.startsWith('temporal '));
    expect(temporal).toEqual([['temporal StartWorkflowExecution', 1]]);
    // Rows of one round trip add up (C2a's run and step each write the run once, a slow attempt once more at most).
    expect(doc.get('C2a')!.get('findAndModify runs')).toBe(3);
  });

  it('reads padded and unpadded rows alike, and ignores other tables', () => {
    const doc = documentedRoundTrips(
      [
        '| C1 | `find workflows` | 1 | why |',
        '| C1  | `insert runs`     | 1       | why, padded |',
        '| C1 | counted: commands per run start | each listed |',
      ].join('\n'),
    );
    expect(Object.fromEntries(doc.get('C1')!)).toEqual({ 'find workflows': 1, 'insert runs': 1 });
  });

  it('fails a round trip measured more often than listed, and one not listed', () => {
    const documented = new Map([
      ['find workflows', 1],
      ['findAndModify rate_limits', 3],
    ]);
    const measured = new Map([
      ['find workflows', 2],
      ['findAndModify rate_limits', 0.15],
      ['find users', 1],
    ]);
    expect(unexplainedRoundTrips(measured, documented)).toEqual([
      ['find workflows', 2],
      ['find users', 1],
    ]);
    expect(unexplainedRoundTrips(new Map([['find workflows', 1]]), documented)).toEqual([]);
  });
});
