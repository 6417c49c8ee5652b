// Gemini CLI names a spill `<tool>_<callId>.txt`, or `<callId>.txt` when the
// call id already starts with the tool's name, as the ids it generates do
// (`<tool>-<Date.now()>-<random hex>`, when the model gave none).
import { expect, it } from 'vitest';
import { parseGeminiName } from '../../../src/catalog/sources/gemini-cli';

it('reads the tool and call id of both name forms', () => {
  expect(parseGeminiName('run_shell_command_1772400000000-0.txt')).toEqual({ tool: 'run_shell_command', callId: '1772400000000-0' });
  expect(parseGeminiName('run_shell_command_abc123.txt')).toEqual({ tool: 'run_shell_command', callId: 'abc123' });
  expect(parseGeminiName('run_shell_command-1767225609960-26e8f1a.txt')).toEqual({ tool: 'run_shell_command', callId: 'run_shell_command-1767225609960-26e8f1a' });
  expect(parseGeminiName('github__search_issues-1767225609960-0a.txt')).toEqual({ tool: 'github__search_issues', callId: 'github__search_issues-1767225609960-0a' });
  expect(parseGeminiName('output.txt')).toEqual({});
});
