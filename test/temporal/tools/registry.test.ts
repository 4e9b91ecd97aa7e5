/** The tool registry: every listed tool is real, and its parameters are a JSON Schema an LLM API accepts. */
import { TOOLS, TOOL_NAMES, getTool, toolParametersSchema } from '../../../temporal/tools/registry';

describe('tool registry', () => {
  it('lists the five tools, each found by name', () => {
    expect(TOOLS.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    expect(TOOL_NAMES).toEqual(['http_fetch', 'calculator', 'current_time', 'send_email', 'json_transform']);
    for (const tool of TOOLS) expect(getTool(tool.name)).toBe(tool);
  });

  it('finds nothing for unknown or prototype names', () => {
    for (const name of ['nope', 'constructor', '__proto__', 'toString', '']) expect(getTool(name)).toBeUndefined();
  });

  it.each(TOOL_NAMES)('%s has a description and an object parameters schema without $schema', (name) => {
    const tool = getTool(name)!;
    expect(tool.description.length).toBeGreaterThan(20);
    const schema = toolParametersSchema(tool);
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(schema.$schema).toBeUndefined();
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  });

  it('marks fields with defaults as optional', () => {
    expect(toolParametersSchema(getTool('http_fetch')!).required).toEqual(['url']);
    expect(toolParametersSchema(getTool('current_time')!).required).toBeUndefined();
  });
});
