// The house's rules (.dependency-cruiser.cjs) checked on src/ by dependency-cruiser itself: no circle of
// imports, no import up a floor, vscode only in the extension. A copy of the rules is also run on a small
// tree that breaks each of them, so a rule that stopped matching would be seen.
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(__dirname, '../..');
const CRUISER = path.join(REPO, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = path.join(REPO, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** The violations dependency-cruiser finds in `cwd`'s src/ under the project's rules. */
async function violations(cwd: string): Promise<Violation[]> {
  const run = await promisify(execFile)(process.execPath, [CRUISER, 'src', '--config', CONFIG, '--output-type', 'json'], { cwd, maxBuffer: 256 << 20 }).catch((e: { stdout?: string; stderr?: string }) => {
    // It exits non-zero when it finds violations; its JSON is still on stdout.
    if (!e.stdout) throw new Error(`dependency-cruiser failed: ${e.stderr ?? String(e)}`);
    return { stdout: e.stdout };
  });
  return (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await fsp.rm(dir, { recursive: true, force: true });
});

describe('the import rules', () => {
  it('src/ breaks none of them', async () => {
    const found = await violations(REPO);
    expect(found.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  });

  it('each rule catches what it forbids', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'arch-rules-'));
    made.push(dir);
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
      'src/spill/engine.ts': "import { listed } from '../catalog/list';\nexport const engine = listed;\n",
      'src/catalog/list.ts': "import * as vscode from 'vscode';\nexport const listed = vscode;\n",
      'src/catalog/scan/a.ts': "import { b } from './b';\nimport { Catalog } from '../catalog';\nexport const a = [b, Catalog];\n",
      'src/catalog/scan/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
      'src/catalog/catalog.ts': 'export class Catalog {}\n',
      'src/adapters/hook.ts': "import { main } from '../cli/main';\nexport const hook = main;\n",
      'src/cli/main.ts': 'export const main = 1;\n',
      'src/webview/chart.ts': "import { main } from '../cli/main';\nexport const chart = main;\n",
    };
    for (const [name, text] of Object.entries(files)) {
      await fsp.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await fsp.writeFile(path.join(dir, name), text);
    }
    const found = await violations(dir);
    const seen = (rule: string, from: string): boolean => found.some((v) => v.rule.name === rule && v.from === from);
    expect(seen('spill-imports-downward-only', 'src/spill/engine.ts')).toBe(true);
    expect(seen('vscode-only-in-extension', 'src/catalog/list.ts')).toBe(true);
    expect(seen('no-circular', 'src/catalog/scan/a.ts')).toBe(true);
    expect(seen('catalog-rooms-below-the-facade', 'src/catalog/scan/a.ts')).toBe(true);
    expect(seen('adapters-imports-downward-only', 'src/adapters/hook.ts')).toBe(true);
    expect(seen('webview-stands-alone', 'src/webview/chart.ts')).toBe(true);
  });
});
