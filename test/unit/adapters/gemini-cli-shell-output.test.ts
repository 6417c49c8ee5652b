import { describe, expect, it } from 'vitest';
import { parseShellContent, shellContentWith } from '../../../src/adapters/gemini-cli-shell-output';

const wrap = (inner: string) => `<untrusted_context>\n${inner}\n</untrusted_context>`;

describe('parseShellContent', () => {
  it('takes Gemini\'s trailer off a failing command\'s output and reads its exit code', () => {
    const c = parseShellContent(wrap('Output: line 1\nExit Code: 7\nline 3\nExit Code: 2\nProcess Group PGID: 4242'))!;
    // Only the last block is the trailer: an "Exit Code:" line inside the output stays output.
    expect(c.output).toBe('line 1\nExit Code: 7\nline 3');
    expect(c.trailer).toEqual(['Exit Code: 2', 'Process Group PGID: 4242']);
    expect(c.exitCode).toBe(2);
    expect(c.before).toBe('<untrusted_context>\nOutput: ');
    expect(c.after).toBe('\n</untrusted_context>');
  });

  it('uses the output Gemini shows the user to tell an output ending in "Exit Code: 3" from the trailer', () => {
    const text = wrap('Output: tests done\nExit Code: 3\nProcess Group PGID: 9');
    // Without the display, the last "Exit Code" line can only be read as Gemini's.
    expect(parseShellContent(text)!.exitCode).toBe(3);
    const c = parseShellContent(text, 'tests done\nExit Code: 3')!;
    expect(c.output).toBe('tests done\nExit Code: 3');
    expect(c.trailer).toEqual(['Process Group PGID: 9']);
    expect(c.exitCode).toBe(0);
    // A display that is not the output (ANSI lines, a summary) is not trusted.
    expect(parseShellContent(text, [{ text: 'x' }])!.exitCode).toBe(3);
    expect(parseShellContent(text, 'other text')!.exitCode).toBe(3);
  });

  it('reads a passing command (no Exit Code line) as exit 0, and a signal as no exit code', () => {
    expect(parseShellContent(wrap('Output: ok\nProcess Group PGID: 1'))!.exitCode).toBe(0);
    const killed = parseShellContent(wrap('Output: partial\nSignal: 9\nBackground PIDs: 12, 13\nProcess Group PGID: 1'))!;
    expect(killed.exitCode).toBeUndefined();
    expect(killed.signal).toBe('9');
    expect(killed.trailer).toEqual(['Signal: 9', 'Background PIDs: 12, 13', 'Process Group PGID: 1']);
  });

  it('keeps text appended after the frame (a hook\'s note) and accepts an unwrapped result', () => {
    const c = parseShellContent(`${wrap('Output: a\nb\nExit Code: 1')}\n\n[System] Tool input parameters (command) were modified by a hook before execution.`)!;
    expect(c.output).toBe('a\nb');
    expect(c.after.endsWith('before execution.')).toBe(true);
    expect(parseShellContent('Output: x\nExit Code: 3')!.exitCode).toBe(3);
  });

  it('leaves cancelled, timed-out and backgrounded commands alone', () => {
    expect(parseShellContent(wrap('Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output. Below is the output before it was cancelled:\nx'))).toBeUndefined();
    expect(parseShellContent(wrap('Command moved to background (PID: 12). Output hidden. Press Ctrl+B to view.'))).toBeUndefined();
    expect(parseShellContent('<untrusted_context>\nOutput: never closed')).toBeUndefined();
  });

  it('puts the digest in Gemini\'s frame, keeps its trailer, and names the exit code and the file', () => {
    const c = parseShellContent(wrap('Output: big\nExit Code: 2\nProcess Group PGID: 5'))!;
    const text = shellContentWith(c, 'DIGEST', '/x/blob.txt');
    expect(text).toBe('<untrusted_context>\nOutput: DIGEST\nExit Code: 2\nProcess Group PGID: 5\n[spillway: the command exited with code 2; its complete output (stdout and stderr) is in /x/blob.txt]\n</untrusted_context>');
  });
});
