// The desktop suite: `npm run test:vscode` downloads VS Code (stable, or
// VSCODE_TEST_VERSION) and runs test/vscode/ inside its extension host.
// HOME and the XDG/TMP folders point at an empty temp folder that the suite
// fills with the fixture home, so no real agent folder is read.
import { defineConfig } from '@vscode/test-cli';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-vscode-test-'));
fs.mkdirSync(path.join(home, 'tmp'));
const workspace = path.join(home, 'workspace');
fs.mkdirSync(workspace);

export default defineConfig([
  {
    label: 'spills',
    files: 'out/vscode-test/**/*.test.js',
    version: process.env.VSCODE_TEST_VERSION ?? 'stable',
    workspaceFolder: workspace,
    launchArgs: ['--disable-extensions', '--disable-workspace-trust'],
    env: {
      SPILLWAY_TEST_HOME: home,
      HOME: home,
      TMPDIR: path.join(home, 'tmp'),
      XDG_STATE_HOME: path.join(home, '.local', 'state'),
      XDG_DATA_HOME: path.join(home, '.local', 'share'),
      CLAUDE_CONFIG_DIR: undefined,
      PI_CODING_AGENT_DIR: undefined,
    },
    mocha: { ui: 'bdd', timeout: 120_000 },
  },
]);
