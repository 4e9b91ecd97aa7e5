/**
 * Which model providers the configuration reaches, and the setting each needs: the API warns on a write naming an
 * unconfigured one (api/commands/model-warnings.ts) and `npm run dev` says which is configured; the worker refuses a
 * call to one on the same settings (temporal/llm/provider.ts). Pure: it reads the parsed Config, never the environment.
 */
import type { Config } from '../config';

export type LlmProviderName = 'openai' | 'anthropic' | 'compat';

/** The settings that decide whether a provider is configured. */
export type LlmProviderSettings = Pick<Config, 'OPENAI_API_KEY' | 'ANTHROPIC_API_KEY' | 'LLM_BASE_URL'>;

/** The variable that turns each provider on (`compat` needs a URL; a local server usually needs no key). */
export const PROVIDER_SETTING = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  compat: 'LLM_BASE_URL',
} as const satisfies Record<LlmProviderName, keyof LlmProviderSettings>;

const PROVIDERS = Object.keys(PROVIDER_SETTING) as LlmProviderName[];

/** True when `value` names one of the providers (the part of a model string before its `:`). */
export function isLlmProviderName(value: string): value is LlmProviderName {
  return (PROVIDERS as string[]).includes(value);
}

/** The providers whose setting is present, in a stable order. */
export function configuredProviders(settings: LlmProviderSettings): LlmProviderName[] {
  return PROVIDERS.filter((p) => !!settings[PROVIDER_SETTING[p]]);
}

/**
 * The variable to set before `model` (`provider:name`) can be called, or undefined when its provider is configured.
 * A model string of no known provider also answers undefined: its shape is the schemas' concern, not this one's.
 */
export function missingProviderSetting(
  settings: LlmProviderSettings,
  model: string,
): (typeof PROVIDER_SETTING)[LlmProviderName] | undefined {
  const provider = model.slice(0, Math.max(0, model.indexOf(':')));
  if (!isLlmProviderName(provider)) return undefined;
  const setting = PROVIDER_SETTING[provider];
  return settings[setting] ? undefined : setting;
}
