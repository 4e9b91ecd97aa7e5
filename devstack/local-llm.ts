/**
 * `npm run dev` with no model provider configured looks for a local OpenAI-compatible server on the usual ports
 * (Ollama :11434, llama.cpp's server :8080, vLLM :8000; DEV_LOCAL_LLM_URLS) and, when one answers `GET /models`, runs
 * the stack's agents on it: LLM_BASE_URL is its URL and the default model its first model. A free machine's first
 * agent run then works without a paid key — and the banner says which server was taken, so nothing is silent.
 */
import type { Config } from '../config';

/** Short: a port with nothing on it refuses at once; one that answers slowly is no server to run agents on. */
const PROBE_TIMEOUT_MS = 800;

export interface LocalLlm {
  /** The base URL (`…/v1`) that answered. */
  baseUrl: string;
  /** Model ids it serves, as it listed them (may be empty: llama.cpp's server lists its one model, Ollama what is pulled). */
  models: string[];
}

/** `GET <baseUrl>/models` in OpenAI's shape (`{data: [{id}]}`), or undefined when nothing such answers in time. */
export async function probeLocalLlm(baseUrl: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<LocalLlm | undefined> {
  try {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { data?: unknown };
    if (!Array.isArray(body.data)) return undefined;
    const models = body.data
      .map((m) => (typeof m === 'object' && m !== null ? (m as { id?: unknown }).id : undefined))
      .filter((id): id is string => typeof id === 'string' && id !== '');
    return { baseUrl, models };
  } catch {
    return undefined;
  }
}

/** Every URL probed at once; the first in `urls`' order that answered wins. */
export async function findLocalLlm(urls: readonly string[]): Promise<LocalLlm | undefined> {
  const found = await Promise.all(urls.map((url) => probeLocalLlm(url)));
  return found.find((f) => f !== undefined);
}

/** What the dev stack runs agents with, for its banner and the processes' environment. */
export type ModelSetup =
  | { kind: 'configured'; providers: string[]; defaultModel: string }
  | { kind: 'local'; server: LocalLlm; defaultModel: string; env: Record<string, string> }
  | { kind: 'none'; defaultModel: string };

/**
 * Decides the model setup: the configured providers when there are any; else a local server found on `urls` (its env:
 * LLM_BASE_URL, and LLM_DEFAULT_MODEL unless set, its first model); else none.
 */
export async function resolveModelSetup(
  config: Pick<Config, 'LLM_DEFAULT_MODEL'>,
  providers: string[],
  defaultModelSet: boolean,
  urls: readonly string[],
): Promise<ModelSetup> {
  if (providers.length > 0) return { kind: 'configured', providers, defaultModel: config.LLM_DEFAULT_MODEL };
  const server = await findLocalLlm(urls);
  if (!server) return { kind: 'none', defaultModel: config.LLM_DEFAULT_MODEL };
  const first = server.models[0];
  const defaultModel = !defaultModelSet && first ? `compat:${first}` : config.LLM_DEFAULT_MODEL;
  return {
    kind: 'local',
    server,
    defaultModel,
    env: {
      LLM_BASE_URL: server.baseUrl,
      ...(defaultModel !== config.LLM_DEFAULT_MODEL ? { LLM_DEFAULT_MODEL: defaultModel } : {}),
    },
  };
}

/** The banner's lines about models: what agent steps run on, or how to get a model when nothing is configured. */
export function modelBannerLines(setup: ModelSetup): string[] {
  switch (setup.kind) {
    case 'configured':
      return [`  Models           ${setup.providers.join(', ')} configured; default model ${setup.defaultModel}`];
    case 'local': {
      const listed = setup.server.models.length ? ` (serves ${setup.server.models.slice(0, 5).join(', ')})` : '';
      return [
        `  Models           local server at ${setup.server.baseUrl}${listed}; default model ${setup.defaultModel}`,
        '                   (found because no OPENAI_API_KEY, ANTHROPIC_API_KEY or LLM_BASE_URL is set)',
      ];
    }
    case 'none':
      return [
        `  Models           none configured: agent steps (default model ${setup.defaultModel}) fail with llm_not_configured`,
        '                   run one locally and restart, e.g.: ollama serve & ollama pull llama3.2',
        '                   or set OPENAI_API_KEY / ANTHROPIC_API_KEY, or LLM_BASE_URL (docs/agents.md "Local models")',
      ];
  }
}
