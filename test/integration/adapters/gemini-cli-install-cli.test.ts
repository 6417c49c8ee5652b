// `spillway hook install|uninstall gemini-cli --project DIR [--trust]` as a user
// runs it, and what the real Gemini CLI 0.61.0 then says about the project hook:
// without --trust it warns on first use (and records the trust itself); with
// --trust Spillway recorded it, so Gemini runs the hook without a warning.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { geminiDirs, offlineGeminiEnv, runGemini, shellScript, startMockGemini } from './helpers/mock-gemini';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');
const geminiScript = path.join(repoRoot, '.cache', 'gemini-cli', 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
const WARNING = 'The following project-level hooks have been detected';
const temps: string[] = [];

beforeAll(() => {
  if (!fs.existsSync(cli)) throw new Error('run `npm run build` first: dist/cli.js is missing');
  if (!fs.existsSync(geminiScript)) throw new Error(`Gemini CLI is missing: ${geminiScript} (node scripts/setup.mjs gemini-cli)`);
});
afterEach(() => {
  for (const t of temps.splice(0)) fs.rmSync(t, { recursive: true, force: true });
});

function spillway(args: string[], home: string): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, [cli, 'hook', ...args], { encoding: 'utf8', env: { ...process.env, HOME: home } });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

async function projectRun(trust: boolean) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-gemini-trust-'));
  temps.push(tmp);
  const { home, workDir } = geminiDirs(tmp);
  const install = spillway(['install', 'gemini-cli', '--project', workDir, ...(trust ? ['--trust'] : [])], home);
  expect(install.status, install.stderr).toBe(0);
  const trustFile = path.join(home, '.gemini', 'trusted_hooks.json');
  const trustedBefore = fs.existsSync(trustFile) ? fs.readFileSync(trustFile, 'utf8') : undefined;
  // A 60 KB output: spilled only if Gemini ran the project's hook.
  const mock = await startMockGemini(shellScript(['seq 1 12000'], 'done'));
  try {
    const run = await runGemini({ script: geminiScript, prompt: 'count', cwd: workDir, env: offlineGeminiEnv({ home, baseUrl: mock.url }) });
    const last = JSON.stringify(mock.requests[mock.requests.length - 1]);
    return { install, trustedBefore, trustFile, run, spilled: last.includes('[spillway: the command exited with code 0'), workDir, home };
  } finally {
    await mock.close();
  }
}

describe('hook install gemini-cli --project', () => {
  it('without --trust: says what to do, records nothing; Gemini warns once, trusts it itself and runs the hook', async () => {
    const r = await projectRun(false);
    expect(r.install.stdout).toContain(`added AfterTool hook (matcher "run_shell_command")`);
    expect(r.install.stdout).toContain(`added AfterAgent hook`);
    expect(r.install.stdout).toContain(`wrote ${path.join(r.workDir, '.gemini', 'settings.json')}`);
    expect(r.install.stdout).toMatch(/run this install again with --trust/);
    expect(r.trustedBefore).toBeUndefined();
    expect(r.run.code, r.run.stderr.slice(-2000)).toBe(0);
    expect(r.run.stderr).toContain(WARNING);
    expect(r.spilled).toBe(true);
    expect(Object.keys(JSON.parse(fs.readFileSync(r.trustFile, 'utf8')))).toEqual([r.workDir]);
  }, 180_000);

  it('with --trust: records the key Gemini CLI uses, so Gemini runs the hook without its warning', async () => {
    const r = await projectRun(true);
    expect(r.install.stdout).toContain(`recorded the hook as trusted for ${r.workDir}`);
    const trusted = JSON.parse(r.trustedBefore!) as Record<string, string[]>;
    expect(trusted[r.workDir]).toHaveLength(1);
    expect(trusted[r.workDir]![0]).toMatch(/^spillway:.*gemini-cli-hook\.js'?$/);
    expect(r.run.code, r.run.stderr.slice(-2000)).toBe(0);
    expect(r.run.stderr).not.toContain(WARNING);
    expect(r.spilled).toBe(true);
    // Uninstall gives back a project with no settings file, as before the install.
    const un = spillway(['uninstall', 'gemini-cli', '--project', r.workDir], r.home);
    expect(un.status, un.stderr).toBe(0);
    expect(fs.existsSync(path.join(r.workDir, '.gemini', 'settings.json'))).toBe(false);
  }, 180_000);

  it('refuses --trust without --project, and unknown options', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-gemini-trust-'));
    temps.push(home);
    expect(spillway(['install', 'gemini-cli', '--trust'], home).status).not.toBe(0);
    expect(spillway(['install', 'gemini-cli', '--frobnicate'], home).status).not.toBe(0);
    expect(fs.existsSync(path.join(home, '.gemini'))).toBe(false);
  });
});
