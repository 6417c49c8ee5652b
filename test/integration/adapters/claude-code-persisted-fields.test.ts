// Why the hook drops persistedOutputPath/persistedOutputSize from its
// replacement, checked on the real Claude Code: a wrapper hook that gives
// Spillway's digest back WITH those fields gets it shown as Claude Code's own
// `<persisted-output>` block labelled "Preview (first 2KB)" and cut to 2 KB, so
// a digest larger than that (SPILLWAY_DIGEST_BYTES=6000 here) loses its tail
// again. (claude-code-e2e.test.ts is the other half: without the fields the
// model gets the whole digest, whatever its size.)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bashScript, CLAUDE_BIN_RELATIVE, claudeDirs, offlineClaudeEnv, runClaude, startMockAnthropic, toolResults } from './helpers/mock-anthropic';

const repoRoot = path.resolve(__dirname, '../../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-cc-fields-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const COMMAND = `seq 1 20000 | sed 's/$/ processed record ok/'; echo "exit summary: 1 shard failed"`;

describe('Claude Code 2.1.332 and a replacement that keeps persistedOutputPath', () => {
  it('shows a head-only 2 KB preview of a larger digest, losing the tail the digest had', async () => {
    const { configDir, workDir } = claudeDirs(tmp);
    const wrapper = path.join(tmp, 'keep-fields.js');
    fs.writeFileSync(
      wrapper,
      `const { spawnSync } = require('node:child_process');
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', () => {
  const env = { ...process.env, SPILLWAY_DIGEST_BYTES: '6000' };
  const r = spawnSync(process.execPath, [${JSON.stringify(path.join(repoRoot, 'dist', 'hook.js'))}, 'claude-code'], { input, encoding: 'utf8', env });
  if (!r.stdout) return;
  const out = JSON.parse(r.stdout);
  const original = JSON.parse(input).tool_response;
  out.hookSpecificOutput.updatedToolOutput.persistedOutputPath = original.persistedOutputPath;
  out.hookSpecificOutput.updatedToolOutput.persistedOutputSize = original.persistedOutputSize;
  fs.writeFileSync(${JSON.stringify(path.join(tmp, 'digest.txt'))}, out.hookSpecificOutput.updatedToolOutput.stdout);
  process.stdout.write(JSON.stringify(out));
});
const fs = require('node:fs');
`,
    );
    fs.writeFileSync(
      path.join(configDir, 'settings.json'),
      JSON.stringify({ hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `${process.execPath} ${wrapper}` }] }] } }),
    );
    const mock = await startMockAnthropic(bashScript([COMMAND]));
    try {
      const run = await runClaude({ bin: path.join(repoRoot, ...CLAUDE_BIN_RELATIVE), prompt: 'process', cwd: workDir, env: offlineClaudeEnv({ home: tmp, configDir, baseUrl: mock.url }) });
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      const digest = fs.readFileSync(path.join(tmp, 'digest.txt'), 'utf8');
      expect(digest.trimEnd().endsWith('exit summary: 1 shard failed')).toBe(true);
      expect(digest.length).toBeGreaterThan(4_000);
      const [seen] = toolResults(mock.requests[mock.requests.length - 1]!);
      expect(seen!.text).toMatch(/^<persisted-output>\nOutput too large/);
      expect(seen!.text).toContain('Preview (first 2KB)');
      expect(seen!.text).toContain('1 processed record ok');
      expect(seen!.text).not.toContain('exit summary: 1 shard failed');
    } finally {
      await mock.close();
    }
  }, 120_000);
});
