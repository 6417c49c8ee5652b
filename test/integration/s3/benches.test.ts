// The object-store benchmarks (bench/s3-*.mjs) run whole in their quick mode (small sizes, one run each), each
// against the RGW it starts itself: they keep working, check what the commands they time printed, and print
// every figure they are read for.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const repo = path.resolve(__dirname, '../../..');
const HANG_GUARD = 600_000;

beforeAll(() => {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'pipe' });
});

function bench(name: string): string {
  return execFileSync(process.execPath, [path.join(repo, 'bench', name)], { cwd: repo, env: { ...process.env, BENCH_S3_QUICK: '1' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The number before `unit` on the line that starts with `label`. */
function figure(out: string, label: string, unit: string): number {
  const line = out.split('\n').find((l) => l.startsWith(label));
  const m = line && new RegExp(`([\\d.]+) ?${unit}`).exec(line.slice(label.length));
  if (!m) throw new Error(`no '${unit}' figure on '${label}' in:\n${out}`);
  return Number(m[1]);
}

describe('object-store benchmarks, quick mode (real RGW)', () => {
  it('s3-upload: 50 queued blobs and one 8 MB blob, each beside the bare SDK, in MB/s and as a ratio', () => {
    const out = bench('s3-upload.mjs');
    expect(out).toContain('node -e 0 (Node start floor)');
    for (const title of ['50 blobs x 16 KB', 'one blob of 8 MB']) expect(out).toContain(title);
    expect(figure(out, 'bare SDK (PutObject loop)', 'MB/s')).toBeGreaterThan(0);
    expect(figure(out, 'bare SDK (lib-storage Upload)', 'MB/s')).toBeGreaterThan(0);
    expect(out.match(/spillway upload .* MB\/s +[\d.]+x the SDK's throughput/g)).toHaveLength(2);
  }, HANG_GUARD);

  it('s3-list: spillway list --root s3:// beside a bare ListObjectsV2 loop over the same keys', () => {
    const out = bench('s3-list.mjs');
    expect(out).toContain('2,500 keys in 125 sessions');
    expect(figure(out, 'spillway list --root s3://… ', 'x the loop')).toBeGreaterThan(0);
    expect(figure(out, 'spillway list --root s3://… --json', 'x the loop')).toBeGreaterThan(0);
  }, HANG_GUARD);

  it('s3-show: the slice is a ranged read (a megabyte or so), the SDK download reads the whole object', () => {
    const out = bench('s3-show.mjs');
    const whole = figure(out, 'SDK GetObject of the whole object', 'MB read');
    const slice = figure(out, 'spillway show s3://…', 'MB read');
    expect(whole).toBeGreaterThanOrEqual(8);
    expect(slice).toBeGreaterThan(0);
    expect(slice).toBeLessThanOrEqual(whole / 4);
  }, HANG_GUARD);

  it('s3-grep: spillway grep over remote blobs, all matches and --max 10, beside SDK download + rg', () => {
    const out = bench('s3-grep.mjs');
    expect(figure(out, 'SDK download (4 at once) + rg -n -F', 'MB/s')).toBeGreaterThan(0);
    expect(figure(out, 'spillway grep --root s3://… (every match)', 'x the SDK')).toBeGreaterThan(0);
    expect(figure(out, 'spillway grep --root s3://… --max 10', 'x the SDK')).toBeGreaterThan(0);
  }, HANG_GUARD);
});
