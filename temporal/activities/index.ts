/**
 * The activities the worker registers, built by one factory from explicit dependencies (no module singletons):
 * the only code that does I/O during a run.
 */
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../config';
import { echo } from './echo';

export interface ActivityDeps {
  config: Config;
  db: Db;
  logger: Logger;
}

export function createActivities(_deps: ActivityDeps) {
  return { echo };
}

export type Activities = ReturnType<typeof createActivities>;
