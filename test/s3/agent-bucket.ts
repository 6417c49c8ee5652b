// The set-up every agent-to-bucket test file shares (kept apart from rgw.ts, which the benchmarks load outside vitest).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startRgw, type Rgw } from './rgw';

/**
 * For a file whose tests run an agent into a bucket: before them the CLI built, the agent there (`needs`: its
 * file, and how a newcomer installs it), a real RGW with `bucket`, and a temp folder named from `tmpPrefix`, each
 * handed to `ready`; after them the server stopped and the folder removed.
 */
export function agentBucket(bucket: string, tmpPrefix: string, ready: (rgw: Rgw, tmp: string) => void, needs?: { file: string; install: string }): void {
  let rgw: Rgw | undefined;
  let tmp: string | undefined;
  beforeAll(async () => {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: path.resolve(__dirname, '../..'), stdio: 'pipe' });
    if (needs && !existsSync(needs.file)) throw new Error(`missing: ${needs.file} (${needs.install})`);
    rgw = await startRgw();
    await rgw.createBucket(bucket);
    tmp = mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
    ready(rgw, tmp);
  }, 240_000);
  afterAll(async () => {
    await rgw?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });
}
