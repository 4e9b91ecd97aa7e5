/** Workflow names as MCP tool names: sanitised to the protocol's pattern, and unique without renaming older tools. */
import { assignToolNames, TOOL_NAME_PATTERN, toolBaseName } from '../../api/mcp/tool-names';

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));

describe('MCP tool names', () => {
  it('sanitises names to the tool-name pattern', () => {
    expect(toolBaseName('Daily Report!')).toBe('daily_report');
    expect(toolBaseName('Café — résumé v2.1')).toBe('cafe_resume_v2.1');
    expect(toolBaseName('  --weird__  ')).toBe('weird');
    expect(toolBaseName('日本語')).toBe('workflow');
    const long = toolBaseName('x'.repeat(300));
    expect(long.length).toBeLessThanOrEqual(100);
    for (const name of ['a', 'Daily Report!', '日本語', 'x'.repeat(300), '...']) {
      expect(toolBaseName(name)).toMatch(TOOL_NAME_PATTERN);
    }
  });

  it('keeps the plain name for the oldest workflow and suffixes later ones and fixed-tool names', () => {
    const names = assignToolNames(
      [
        { id: 'wf_later000000BBBBBB', name: 'Report', created_at: at(5) },
        { id: 'wf_oldest00000AAAAAA', name: 'report', created_at: at(1) },
        { id: 'wf_fixedname00CCCCCC', name: 'Get Run', created_at: at(0) },
        { id: 'wf_same_tail00BBBBBB', name: 'REPORT', created_at: at(9) },
      ],
      new Set(['get_run']),
    );
    expect(names.get('wf_oldest00000AAAAAA')).toBe('report');
    expect(names.get('wf_later000000BBBBBB')).toBe('report_BBBBBB');
    expect(names.get('wf_fixedname00CCCCCC')).toBe('get_run_CCCCCC');
    // Same base and the same id tail: the whole id decides.
    expect(names.get('wf_same_tail00BBBBBB')).toBe('report_wf_same_tail00BBBBBB');
    expect(new Set(names.values()).size).toBe(4);
    for (const name of names.values()) expect(name).toMatch(TOOL_NAME_PATTERN);
  });
});
