// Several real processes append to one manifest (and save blobs into one
// session folder) at the same moment; every line must come out whole.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_NAME, parseManifest } from '../../../src/spill/manifest';
import { tempDir } from '../../unit/spill/temp-dirs';

const run = promisify(execFile);
const work = tempDir('spillway-concurrency-');
const bundle = path.join(work, 'engine.cjs');
const child = path.join(work, 'child.cjs');

beforeAll(async () => {
  // Only the engine's own modules, bundled the way the package build does.
  await esbuild.build({
    stdin: { contents: "export * from './src/spill/local-store'; export * from './src/spill/manifest';", resolveDir: process.cwd(), loader: 'ts' },
    bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: bundle, logLevel: 'silent',
  });
  writeFileSync(child, `
const { appendManifest, LocalSpillStore } = require(${JSON.stringify(bundle)});
const [mode, dir, id, count] = process.argv.slice(2);
(async () => {
  const pad = 'x'.repeat(3000 + Number(id) * 10);
  if (mode === 'append') {
    await Promise.all(Array.from({ length: Number(count) }, (_, i) => appendManifest(dir, {
      v: 1, file: 'w' + id + '-' + i + '.txt', tool: 'Bash', toolCallId: id + ':' + i, args: { pad },
      bytes: i, lines: 1, sha256: 'h', createdAt: new Date().toISOString(), sessionId: 's' })));
  } else {
    const store = new LocalSpillStore({ root: dir });
    for (let i = 0; i < Number(count); i++) {
      await store.saveText({ owner: { sessionId: 'shared' }, source: { toolName: 'Bash', callId: 'c', label: '' },
        suggestedName: 'Bash-c.txt', content: 'proc ' + id + ' blob ' + i + '\\n' + pad, args: { id, i } });
    }
  }
})().catch((e) => { console.error(e); process.exit(1); });
`);
});

describe('manifest under concurrent appends from several processes', () => {
  it('keeps every line intact (8 processes x 50 records of ~3 KB)', async () => {
    const dir = tempDir('spillway-manifest-');
    await Promise.all(Array.from({ length: 8 }, (_, id) => run(process.execPath, [child, 'append', dir, String(id), '50'])));
    const text = readFileSync(path.join(dir, MANIFEST_NAME), 'utf8');
    const { records, skipped } = parseManifest(text);
    expect(skipped).toBe(0);
    expect(records).toHaveLength(400);
    expect(new Set(records.map((r) => r.toolCallId)).size).toBe(400);
    expect(text.split('\n').filter(Boolean)).toHaveLength(400);
  });

  it('LocalSpillStore saves from 4 processes into one session: every blob recorded, no name clash', async () => {
    const root = tempDir('spillway-root-');
    await Promise.all(Array.from({ length: 4 }, (_, id) => run(process.execPath, [child, 'save', root, String(id), '25'])));
    const { readdirSync } = await import('node:fs');
    const [sessionDir] = readdirSync(root);
    const dir = path.join(root, sessionDir!);
    const { records, skipped } = parseManifest(readFileSync(path.join(dir, MANIFEST_NAME), 'utf8'));
    expect(skipped).toBe(0);
    expect(records).toHaveLength(100);
    const files = readdirSync(dir).filter((f) => f !== MANIFEST_NAME);
    expect(files).toHaveLength(100);
    expect(new Set(records.map((r) => r.file))).toEqual(new Set(files));
  });
});
