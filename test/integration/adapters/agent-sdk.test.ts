// The Claude Agent SDK's own query() with spillHook() in options.hooks: the SDK
// starts the real Claude Code CLI, which calls back into this process for the
// hook; the CLI talks to a mock Messages API on 127.0.0.1.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spillHook, spillwayEnv, spillwayHooks } from '../../../src/adapters/agent-sdk';
import { failingBuild, fullOutputOf } from './helpers/failing-build';
import { readManifest } from '../../../src/spill/manifest';
import { bashScript, CLAUDE_BIN_RELATIVE, claudeDirs, offlineClaudeEnv, startMockAnthropic, toolResults } from './helpers/mock-anthropic';

const repoRoot = path.resolve(__dirname, '../../..');
const claudeBin = path.join(repoRoot, ...CLAUDE_BIN_RELATIVE);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-sdk-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const COMMAND = `for i in $(seq 1 1000); do echo "test $i passed"; done; echo "FAILED: 2 tests failed (see test 997)"`;

describe('Agent SDK query() with spillHook()', () => {
  it('hands the model the digest and keeps the full output in the session spill folder', async () => {
    const { configDir, workDir } = claudeDirs(tmp);
    const mock = await startMockAnthropic(bashScript([COMMAND]));
    try {
      const { query } = await import('@anthropic-ai/claude-agent-sdk');
      const messages = query({
        prompt: 'run the tests',
        options: {
          cwd: workDir,
          pathToClaudeCodeExecutable: claudeBin,
          permissionMode: 'bypassPermissions',
          allowDangerouslySkipPermissions: true,
          settingSources: [],
          hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [spillHook()] }] },
          env: offlineClaudeEnv({ home: tmp, configDir, baseUrl: mock.url }),
        },
      });
      let result: unknown;
      for await (const m of messages) if (m.type === 'result') result = m;
      expect(result).toMatchObject({ subtype: 'success' });

      const last = mock.requests[mock.requests.length - 1]!;
      const [seen] = toolResults(last);
      expect(seen).toBeDefined();
      expect(seen!.text).toContain('FAILED: 2 tests failed (see test 997)');
      expect(seen!.text).toContain('[... spillway:');
      expect(seen!.text.length).toBeLessThan(6_000);
      const projects = path.join(configDir, 'projects');
      const [enc] = fs.readdirSync(projects);
      const session = fs.readdirSync(path.join(projects, enc!)).find((f) => !f.endsWith('.jsonl'))!;
      const spillDir = path.join(projects, enc!, session, 'spillway');
      const { records } = await readManifest(spillDir);
      expect(records).toHaveLength(1);
      expect(records[0]!.tool).toBe('Bash');
      expect(fs.readFileSync(path.join(spillDir, records[0]!.file), 'utf8')).toContain('test 200 passed\ntest 201 passed');

      const listed = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'list', '--json', '--no-default-roots', '--root', configDir, '--source', 'claude-code'], {
        encoding: 'utf8',
        env: { ...process.env, HOME: tmp, CLAUDE_CONFIG_DIR: configDir },
      });
      expect(listed.status, listed.stderr).toBe(0);
      const blobs = (JSON.parse(listed.stdout) as { sessions: Array<{ blobs: Array<{ path: string; tool: string | null }> }> }).sessions.flatMap((x) => x.blobs);
      expect(blobs.find((b) => b.path === path.join(spillDir, records[0]!.file))?.tool).toBe('Bash');
    } finally {
      await mock.close();
    }
  }, 120_000);

  it('with spillwayHooks() and spillwayEnv(), a failing 300 KB build reaches the model with its failure line, exit code and the complete output file', async () => {
    const dirs = claudeDirs(fs.mkdtempSync(path.join(tmp, 'capture-')));
    const build = failingBuild(300_000, 2, Math.random, 1); // make's `*** ... Stop.`: no failure word
    const mock = await startMockAnthropic(bashScript([build.command, 'echo ok']));
    try {
      const { query } = await import('@anthropic-ai/claude-agent-sdk');
      const messages = query({
        prompt: 'build it',
        options: {
          cwd: dirs.workDir,
          pathToClaudeCodeExecutable: claudeBin,
          permissionMode: 'bypassPermissions',
          allowDangerouslySkipPermissions: true,
          settingSources: [],
          hooks: spillwayHooks(),
          env: { ...offlineClaudeEnv({ home: tmp, configDir: dirs.configDir, baseUrl: mock.url }), ...spillwayEnv({ distDir: path.join(repoRoot, 'dist') }) },
        },
      });
      for await (const _m of messages) { /* run to the end */ }
      const [seen, echo] = toolResults(mock.requests[mock.requests.length - 1]!);
      expect(seen!.text).toContain(build.failureLine);
      expect(seen!.text).toContain('Exit code 2');
      expect(seen!.text.length).toBeLessThan(4_000);
      const file = /(\/\S+\/spillway\/bash-[^\s\]]+\.txt)/.exec(seen!.text)?.[1];
      expect(fs.readFileSync(file!, 'utf8')).toBe(fullOutputOf(build, dirs.workDir));
      expect(echo!.text).toBe('ok');
    } finally {
      await mock.close();
    }
  }, 180_000);
});
