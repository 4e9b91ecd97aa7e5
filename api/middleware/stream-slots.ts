/**
 * Open event streams are long requests: each holds a socket and polls the database until its run ends. Slots bound
 * them per API process (EVENTS_MAX_STREAMS) and per user (EVENTS_MAX_STREAMS_PER_USER); past either, 429 before any
 * stream starts. Counted in memory: a slot belongs to this process's sockets and ends with them.
 */
import { TooManyStreamsError } from '../http/errors';

export class StreamSlots {
  private total = 0;
  private readonly perUser = new Map<string, number>();

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerUser: number,
  ) {}

  /** Takes a slot for `userId`; the returned function gives it back (once, however often it is called). */
  take(userId: string): () => void {
    const mine = this.perUser.get(userId) ?? 0;
    if (mine >= this.maxPerUser) {
      throw new TooManyStreamsError(`you already have ${mine} event streams open (the limit); close one first`);
    }
    if (this.total >= this.maxTotal) throw new TooManyStreamsError('this server has no room for another event stream');
    this.total++;
    this.perUser.set(userId, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.perUser.get(userId) ?? 1) - 1;
      if (left > 0) this.perUser.set(userId, left);
      else this.perUser.delete(userId);
    };
  }
}
