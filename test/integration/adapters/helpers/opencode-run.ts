// Runs the real opencode (installed by scripts/ensure-opencode.mjs) headless and
// offline: a fresh HOME and XDG folders, a provider pointing at a local mock of
// the OpenAI chat-completions API, opencode's plugin SDK copied in ready so it
// installs nothing, and whatever else the test puts in opencode.json.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
// @ts-expect-error: a plain .mjs set-up script without typings
import { ensureOpencode } from '../../../../scripts/ensure-opencode.mjs';

export interface OpencodeHome {
  root: string;
  home: string;
  configDir: string;
  dataDir: string;
  project: string;
  env: NodeJS.ProcessEnv;
  binary: string;
  /** Writes `<configDir>/opencode.json`: the mock provider plus `extra` (plugin, permission...). */
  writeConfig(baseURL: string, extra?: Record<string, unknown>): string;
}

export const MOCK_MODEL = 'mock/mock-model';

export async function makeOpencodeHome(): Promise<OpencodeHome> {
  const { binary, pluginHome } = (await ensureOpencode()) as { binary: string; pluginHome: string };
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-opencode-')));
  const home = path.join(root, 'home');
  const configDir = path.join(home, '.config', 'opencode');
  const dataDir = path.join(home, '.local', 'share');
  const project = path.join(root, 'project');
  for (const dir of [configDir, dataDir, project, path.join(home, '.cache'), path.join(home, '.local', 'state')]) fs.mkdirSync(dir, { recursive: true });
  fs.cpSync(pluginHome, configDir, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    SHELL: '/bin/bash',
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: dataDir,
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    NO_COLOR: '1',
  };
  return {
    root,
    home,
    configDir,
    dataDir,
    project,
    env,
    binary,
    writeConfig(baseURL, extra = {}) {
      const file = path.join(configDir, 'opencode.json');
      const config = {
        $schema: 'https://opencode.ai/config.json',
        autoupdate: false,
        share: 'disabled',
        provider: {
          mock: { npm: '@ai-sdk/openai-compatible', name: 'Mock', options: { baseURL, apiKey: 'test-key' }, models: { 'mock-model': { name: 'Mock model' } } },
        },
        model: MOCK_MODEL,
        ...extra,
      };
      fs.writeFileSync(file, JSON.stringify(config, null, 2) + '\n');
      return file;
    },
  };
}

export interface OpencodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The JSON events of `--format json`, one per line. */
  events: Array<Record<string, unknown>>;
}

export function runOpencode(h: OpencodeHome, prompt: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<OpencodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(h.binary, ['run', '--format', 'json', '-m', MOCK_MODEL, prompt], { cwd: h.project, env: { ...h.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => {
      const events: Array<Record<string, unknown>> = [];
      for (const line of stdout.split('\n')) {
        try {
          if (line.trim()) events.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // not an event line
        }
      }
      resolve({ code, stdout, stderr, events });
    });
  });
}
