/** Where the dev stack keeps what it installs and the data it writes: all under the ignored .stepwise/ folder. */
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..');
export const stateDir = path.join(repoRoot, '.stepwise');
export const toolsDir = path.join(stateDir, 'tools');
export const cacheDir = path.join(stateDir, 'cache');

export interface DevStatePaths {
  /** Databases of the servers `npm run dev` starts (Temporal's SQLite file, MongoDB's data). */
  dataDir: string;
  logsDir: string;
  /** The demo user's plaintext key (mode 0600): only its hash is in the database, so this is the one copy. */
  demoKeyFile: string;
  /** PAYLOAD_CODEC_KEYS and CODEC_ACCESS_TOKEN the dev stack generated (mode 0600): lose the key, lose old runs. */
  codecSecretsFile: string;
}

/**
 * The dev stack's state folders: `.stepwise/` by default, or DEV_STATE_DIR (tests use a throwaway one). Installed
 * tools and the workflow bundle cache always stay in the repo's `.stepwise/` so every stack reuses them.
 */
export function devStatePaths(stateDirOverride?: string): DevStatePaths {
  const root = stateDirOverride ? path.resolve(stateDirOverride) : stateDir;
  return {
    dataDir: path.join(root, 'data'),
    logsDir: path.join(root, 'logs'),
    demoKeyFile: path.join(root, 'demo-key'),
    codecSecretsFile: path.join(root, 'codec-secrets'),
  };
}
