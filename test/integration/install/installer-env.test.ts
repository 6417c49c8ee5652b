// The set-up scripts run installers (code-server, pi) with another Node from
// inside `npm run`. The outer npm on Node 20 exports npm_config_user_agent
// ("npm/11 node/v20 ...") and the other npm_* variables; code-server's
// postinstall reads its Node version from that and refused to install. This
// runs installerEnv() from inside a real `npm run` and checks what an
// installer started with it sees.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, expect, it } from 'vitest';

const repoRoot = path.resolve(__dirname, '../../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-installer-env-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

it('an installer started from inside `npm run` sees its own Node and no npm_* variable of the outer npm', () => {
  const node22 = execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'ensure-node.mjs'), '22'], { encoding: 'utf8' }).trim();
  const installStep = path.join(repoRoot, 'scripts', 'install-step.mjs');
  // What the installer reports: the npm_* variables it inherited and the `node` PATH gives it.
  const installer = `console.log(JSON.stringify({ npm: Object.keys(process.env).filter((k) => /^npm_/i.test(k)), version: process.version }))`;
  fs.writeFileSync(
    path.join(tmp, 'probe.mjs'),
    [
      `import { execFileSync } from 'node:child_process';`,
      `import { installerEnv } from ${JSON.stringify(installStep)};`,
      `const outer = Object.keys(process.env).filter((k) => /^npm_/i.test(k));`,
      `const inner = JSON.parse(execFileSync('node', ['-e', ${JSON.stringify(installer)}], { env: installerEnv(${JSON.stringify(node22)}), encoding: 'utf8' }));`,
      `console.log(JSON.stringify({ outer, userAgent: process.env.npm_config_user_agent, inner }));`,
    ].join('\n'),
  );
  fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'probe', version: '1.0.0', scripts: { probe: 'node probe.mjs' } }));
  const report = JSON.parse(execFileSync('npm', ['run', '--silent', 'probe'], { cwd: tmp, encoding: 'utf8' }).trim().split('\n').pop()!) as {
    outer: string[];
    userAgent: string;
    inner: { npm: string[]; version: string };
  };
  // The outer npm did export what misled code-server...
  expect(report.outer).toContain('npm_config_user_agent');
  expect(report.userAgent).toMatch(new RegExp(`node/${process.version}`));
  // ...and the installer sees none of it, and runs on the Node it was given.
  expect(report.inner.npm).toEqual([]);
  expect(report.inner.version).toMatch(/^v22\./);
});
