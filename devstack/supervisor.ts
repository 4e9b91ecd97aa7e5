/**
 * Every process the dev stack starts is registered here the moment it is spawned, so a stop — Ctrl-C, SIGTERM, a
 * crash of one part, or an error during start-up — reaches all of them, including one still starting.
 */
import type { Managed } from './process';

export class Supervisor {
  private readonly procs: Managed[] = [];
  private stopping: Promise<void> | undefined;

  /** How many processes were ever registered. */
  get count(): number {
    return this.procs.length;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Registers a freshly spawned process. One registered after the stop began is stopped at once. */
  readonly track = (proc: Managed): void => {
    this.procs.push(proc);
    if (this.stopping) void proc.stop(0);
  };

  /**
   * Stops everything in reverse start order (the API and worker drain before the servers they use go away),
   * giving each `graceMs` before SIGKILL. Idempotent: later calls wait for the same stop.
   */
  stopAll(graceMs: number): Promise<void> {
    this.stopping ??= (async () => {
      const done = new Set<Managed>();
      for (let next = this.pending(done); next; next = this.pending(done)) {
        await next.stop(graceMs);
        done.add(next);
      }
    })();
    return this.stopping;
  }

  /** SIGKILL to every process group, synchronously: the last word before exiting (a second Ctrl-C, a crash). */
  killAll(): void {
    for (const proc of this.procs) {
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  private pending(done: Set<Managed>): Managed | undefined {
    return [...this.procs].reverse().find((p) => !done.has(p));
  }
}
