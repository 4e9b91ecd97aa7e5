/**
 * The dev stack's demo user. Issue "templates, tools and authentication" gives it a real API key; until then it
 * reports that no key exists.
 */
import type { Config } from '../config';

export async function createDemoUser(_config: Config): Promise<string | undefined> {
  return undefined;
}
