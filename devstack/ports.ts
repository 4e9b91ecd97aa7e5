/** Up-front port check of `npm run dev`: every taken or doubly-used port is reported with the setting that moves it. */
import { isPortFree } from './process';

export interface PortClaim {
  port: number;
  /** The environment variable that chooses this port. */
  setting: string;
  /** What would listen there, for the message. */
  what: string;
  host?: string;
}

export class PortsUnavailableError extends Error {
  constructor(readonly problems: string[]) {
    super(`cannot start: ${problems.length === 1 ? problems[0] : `\n${problems.map((p) => `  - ${p}`).join('\n')}`}`);
    this.name = 'PortsUnavailableError';
  }
}

/** Resolves when every claimed port is free and claimed once; otherwise rejects listing every problem. */
export async function assertPortsFree(claims: PortClaim[]): Promise<void> {
  const problems: string[] = [];
  const seen = new Map<number, PortClaim>();
  for (const claim of claims) {
    const earlier = seen.get(claim.port);
    if (earlier) {
      problems.push(
        `${claim.setting} and ${earlier.setting} both use port ${claim.port}; give one of them another port`,
      );
      continue;
    }
    seen.set(claim.port, claim);
    if (!(await isPortFree(claim.port, claim.host))) {
      problems.push(
        `port ${claim.port} for ${claim.what} is already in use; free it or choose another port with ${claim.setting}=<port>`,
      );
    }
  }
  if (problems.length > 0) throw new PortsUnavailableError(problems);
}
