/** config.ts: settings whose parsing is more than a type (the rest is covered by test/readme.test.ts's table check). */
import { ConfigError, loadConfig } from '../config';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('MCP_STDIO_SERVERS', () => {
  it('is empty (stdio servers off) when unset', () => {
    expect(loadConfig({}).MCP_STDIO_SERVERS).toEqual({});
  });

  it('reads the operator’s declarations by name', () => {
    const config = loadConfig({
      MCP_STDIO_SERVERS: JSON.stringify({
        files: { command: 'npx', args: ['-y', 'server'], env: { A: '1' }, allowed_tools: ['read_file'] },
        plain: { command: '/usr/bin/srv' },
      }),
    });
    expect(config.MCP_STDIO_SERVERS).toEqual({
      files: { command: 'npx', args: ['-y', 'server'], env: { A: '1' }, allowed_tools: ['read_file'] },
      plain: { command: '/usr/bin/srv' },
    });
  });

  it('stops the start on text that is not JSON, a bad name, a missing command or an unknown field', () => {
    expect(problems({ MCP_STDIO_SERVERS: '{files: npx}' })).toEqual([
      'MCP_STDIO_SERVERS: must be a JSON object: {"<name>": {"command": "…"}}',
    ]);
    const bad = problems({
      MCP_STDIO_SERVERS: JSON.stringify({ 'a b': { command: 'x' }, nocmd: {}, extra: { command: 'x', shell: true } }),
    });
    expect(bad.join('\n')).toContain('MCP_STDIO_SERVERS.a b: server names: letters, digits');
    expect(bad.join('\n')).toContain('MCP_STDIO_SERVERS.nocmd.command');
    expect(bad.join('\n')).toContain('shell');
  });
});
