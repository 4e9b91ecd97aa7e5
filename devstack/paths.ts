/** Where the dev stack keeps what it installs and the data it writes: all under the ignored .stepwise/ folder. */
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..');
export const stateDir = path.join(repoRoot, '.stepwise');
export const toolsDir = path.join(stateDir, 'tools');
export const dataDir = path.join(stateDir, 'data');
export const logsDir = path.join(stateDir, 'logs');
export const cacheDir = path.join(stateDir, 'cache');
