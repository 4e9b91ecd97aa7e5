/**
 * How `npm run dev` finds a local OpenAI-compatible server when no provider is configured (devstack/local-llm.ts):
 * against a real server on a free port (the scripted model server, which lists its models as Ollama, llama.cpp's
 * server and vLLM do) and a closed port; and what the banner then says.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { findLocalLlm, modelBannerLines, probeLocalLlm, resolveModelSetup } from '../../devstack/local-llm';
import { freePort } from '../../devstack/process';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';

describe('finding a local model server (npm run dev)', () => {
  let llm: LlmServer;
  let closed: string;
  let notOpenAi: http.Server;
  let notOpenAiUrl: string;

  beforeAll(async () => {
    llm = await startLlmServer();
    llm.script('llama3.2', [{ text: 'hi' }]);
    closed = `http://127.0.0.1:${await freePort()}/v1`;
    // Something else on a usual port (a web app on :8080): it answers, but not with a model list.
    notOpenAi = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html/>'));
    await new Promise<void>((resolve) => notOpenAi.listen(0, '127.0.0.1', resolve));
    notOpenAiUrl = `http://127.0.0.1:${(notOpenAi.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await llm?.close();
    await new Promise((resolve) => notOpenAi?.close(resolve));
  });

  it('takes a server that lists models, skips a closed port and a server that is not OpenAI-compatible', async () => {
    expect(await probeLocalLlm(llm.baseUrl)).toEqual({ baseUrl: llm.baseUrl, models: ['llama3.2'] });
    expect(await probeLocalLlm(closed)).toBeUndefined();
    expect(await probeLocalLlm(notOpenAiUrl)).toBeUndefined();
    expect(await findLocalLlm([closed, notOpenAiUrl, llm.baseUrl])).toEqual({
      baseUrl: llm.baseUrl,
      models: ['llama3.2'],
    });
    expect(await findLocalLlm([closed, notOpenAiUrl])).toBeUndefined();
  });

  it('uses the local server only when no provider is configured, and says so in the banner', async () => {
    const config = { LLM_DEFAULT_MODEL: 'openai:gpt-4o-mini' };
    const local = await resolveModelSetup(config, [], false, [closed, llm.baseUrl]);
    expect(local).toMatchObject({
      kind: 'local',
      defaultModel: 'compat:llama3.2',
      env: { LLM_BASE_URL: llm.baseUrl, LLM_DEFAULT_MODEL: 'compat:llama3.2' },
    });
    expect(modelBannerLines(local)[0]).toContain(
      `local server at ${llm.baseUrl} (serves llama3.2); default model compat:llama3.2`,
    );

    // A default model the user chose is kept; only the URL is filled in.
    const chosen = await resolveModelSetup({ LLM_DEFAULT_MODEL: 'compat:qwen' }, [], true, [llm.baseUrl]);
    expect(chosen).toMatchObject({ kind: 'local', defaultModel: 'compat:qwen', env: { LLM_BASE_URL: llm.baseUrl } });
    expect(chosen.kind === 'local' && 'LLM_DEFAULT_MODEL' in chosen.env).toBe(false);

    const configured = await resolveModelSetup(config, ['openai'], false, [llm.baseUrl]);
    expect(configured).toEqual({ kind: 'configured', providers: ['openai'], defaultModel: 'openai:gpt-4o-mini' });
    expect(modelBannerLines(configured)).toEqual([
      '  Models           openai configured; default model openai:gpt-4o-mini',
    ]);

    const none = await resolveModelSetup(config, [], false, [closed]);
    expect(none).toEqual({ kind: 'none', defaultModel: 'openai:gpt-4o-mini' });
    const text = modelBannerLines(none).join('\n');
    expect(text).toContain(
      'none configured: agent steps (default model openai:gpt-4o-mini) fail with llm_not_configured',
    );
    expect(text).toContain('ollama serve');
    expect(text).toContain('LLM_BASE_URL');
  });
});
