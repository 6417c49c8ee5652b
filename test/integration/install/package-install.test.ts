// The install lines the README gives for a clone (nothing is published yet):
// `npm run package` builds spillway-<v>.tgz and spillway.vsix; the tarball is
// installed with npm as users do (-g, here into a temp prefix), its `spillway`
// runs, its hook installs and answers, and real pi takes it with `pi install`.
// The .vsix install (code-server --install-extension) is the e2e tier's setup.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(__dirname, '../../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-package-'));
const prefix = path.join(tmp, 'prefix');
const home = path.join(tmp, 'home');
const env = { ...process.env, HOME: home, XDG_STATE_HOME: path.join(home, '.state'), XDG_CACHE_HOME: path.join(home, '.cache') };
let bin: string;
let installed: string;

beforeAll(() => {
  fs.mkdirSync(home);
  execFileSync('npm', ['run', '--silent', 'package'], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] });
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string };
  const tarball = path.join(repoRoot, `${pkg.name}-${pkg.version}.tgz`);
  expect(fs.existsSync(path.join(repoRoot, 'spillway.vsix'))).toBe(true);
  execFileSync('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', tarball], { cwd: tmp, env, stdio: ['ignore', 'ignore', 'inherit'] });
  bin = path.join(prefix, 'bin', 'spillway');
  installed = path.join(prefix, 'lib', 'node_modules', pkg.name);
}, 300_000);

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the npm tarball from `npm run package`', () => {
  it('puts a working `spillway` on PATH', () => {
    const root = path.join(tmp, 'empty-root');
    fs.mkdirSync(root);
    const res = spawnSync(bin, ['list', '--json', '--no-default-roots', '--root', root], { encoding: 'utf8', env });
    expect(res.status, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ sessions: [] });
  });

  it('installs a Claude Code hook that points into the installed package and answers', () => {
    const project = path.join(tmp, 'project');
    fs.mkdirSync(project);
    const res = spawnSync(bin, ['hook', 'install', 'claude-code', '--project', project], { encoding: 'utf8', env });
    expect(res.status, res.stderr).toBe(0);
    const settings = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8'));
    const commands: string[] = Object.values(settings.hooks as Record<string, Array<{ hooks: Array<{ command: string }> }>>)
      .flat()
      .flatMap((entry) => entry.hooks.map((h) => h.command));
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) {
      expect(command).toContain(fs.realpathSync(installed));
      const [node, script, ...args] = command.split(' ');
      const hook = spawnSync(node!, [script!, ...args], { input: '{}', encoding: 'utf8', env });
      expect(hook.status, hook.stderr).toBe(0);
    }
  });

  it('is a pi package: `pi install` of the installed folder registers its extension', () => {
    const pi = JSON.parse(execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'ensure-pi.mjs')], { encoding: 'utf8' })) as { node: string; modules: string };
    const piCli = path.join(pi.modules, '@earendil-works', 'pi-coding-agent', 'dist', 'bundle', 'cli.js');
    const piEnv = { ...env, PI_CODING_AGENT_DIR: path.join(tmp, 'pi-agent'), PI_OFFLINE: '1' };
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as { pi: { extensions: string[] } };
    for (const ext of manifest.pi.extensions) expect(fs.existsSync(path.join(installed, ext))).toBe(true);
    const add = spawnSync(pi.node, [piCli, 'install', installed], { encoding: 'utf8', env: piEnv });
    expect(add.status, add.stderr + add.stdout).toBe(0);
    const list = spawnSync(pi.node, [piCli, 'list'], { encoding: 'utf8', env: piEnv });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(installed);
  });
});
