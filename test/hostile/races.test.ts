// Races: folders swapped for symlinks while clean and spill run, and
// concurrent spills of the same bodies. Each race is repeated enough to
// catch a window hit one time in ten.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseDirs, hostileFile, run, SENTINEL_NAMES, sessionFolder, spillwaySession, swapper, treeHash, write } from './helpers';

const { base, sentinel } = hostileFile('races');

/** Three Spillway sessions under `spills`, each holding blobs named like the sentinel's files. */
async function sessionsNamedLikeSentinel(spills: string, tag: string): Promise<string[]> {
  const folders: string[] = [];
  for (let s = 0; s < 3; s++) {
    const folder = path.join(spills, `session-${tag}s${s}`);
    await spillwaySession(folder, `${tag}-${s}`, SENTINEL_NAMES);
    folders.push(folder);
  }
  return folders;
}

describe('a session folder swapped for a symlink', () => {
  it('during clean: nothing outside the roots is deleted (12 runs)', async () => {
    const before = await treeHash(sentinel());
    for (let runIndex = 0; runIndex < 12; runIndex++) {
      const c = await caseDirs(base(), `clean-swap-${runIndex}`);
      const folders = await sessionsNamedLikeSentinel(c.spills, `swap${runIndex}`);
      const swap = swapper(folders, sentinel());
      const result = await run(['clean', '--older-than', '0s', '--yes', '--no-default-roots', '--root', c.spills], { env: c.env, timeoutMs: 60_000 });
      await swap.stop();
      expect(result.timedOut).toBe(false);
      expect(await treeHash(sentinel()), `run ${runIndex}: files outside the roots were deleted or rewritten`).toBe(before);
    }
  });

  it('a Claude Code tool-results folder, during clean --session: nothing outside is deleted (6 runs)', async () => {
    const before = await treeHash(sentinel());
    for (let runIndex = 0; runIndex < 6; runIndex++) {
      const c = await caseDirs(base(), `claude-swap-${runIndex}`);
      const uuid = `00000000-0000-4000-8000-00000000000${runIndex}`;
      const project = path.join(c.claudeProjects, '-home-dev-w');
      await fsp.mkdir(project, { recursive: true });
      await fsp.writeFile(path.join(project, `${uuid}.jsonl`), JSON.stringify({ type: 'user', sessionId: uuid, cwd: '/w', message: { content: 'hi' } }) + '\n');
      const results = path.join(project, uuid, 'tool-results');
      for (const name of SENTINEL_NAMES) await write(path.join(results, name), `blob ${name}\n`);
      const swap = swapper([results], path.join(sentinel(), 'nested', 'tool-results'));
      const result = await run(['clean', '--session', uuid, '--yes'], { env: c.env, timeoutMs: 60_000 });
      await swap.stop();
      expect(result.timedOut).toBe(false);
      expect(await treeHash(sentinel()), `run ${runIndex}: files outside the roots were deleted`).toBe(before);
    }
  });

  it('during spill: no blob and no manifest record lands outside the root (48 spills, 8 at a time)', async () => {
    const c = await caseDirs(base(), 'spill-swap');
    const folder = sessionFolder(c.spills, 'swap-session');
    await fsp.mkdir(folder, { recursive: true, mode: 0o700 });
    const swap = swapper([folder], sentinel());
    const outputs: Array<{ body: string; stdout: Buffer }> = [];
    try {
      for (let round = 0; round < 6; round++) {
        const bodies = Array.from({ length: 8 }, (_, i) => `spill ${round}.${i}\n` + 'x'.repeat(20_000) + `\nend ${round}.${i}\n`);
        const runs = await Promise.all(bodies.map((body) => run(['spill', '--session', 'swap-session', '--tool', 'Bash', '--json'], { env: c.env, input: body, timeoutMs: 60_000 })));
        runs.forEach((r, i) => {
          expect(r.timedOut).toBe(false);
          expect(r.code).toBe(0);
          outputs.push({ body: bodies[i]!, stdout: r.stdout });
        });
      }
    } finally {
      await swap.stop();
    }
    for (const { body, stdout } of outputs) {
      const out = JSON.parse(stdout.toString('utf8')) as { spilled: boolean; text: string; ref?: { locator: string } };
      // Either the original came back, or the digest names a file holding exactly the original.
      if (!out.spilled) expect(out.text).toBe(body);
      else expect(await fsp.readFile(out.ref!.locator, 'utf8')).toBe(body);
    }
  });
});

describe('a session folder swapped for a symlink during a read', () => {
  it.each(['node', 'rg'])('grep (%s engine) prints no line of a same-named file outside the roots (12 runs)', async (engine) => {
    for (let runIndex = 0; runIndex < 12; runIndex++) {
      const c = await caseDirs(base(), `grep-${engine}-swap-${runIndex}`);
      const folders = await sessionsNamedLikeSentinel(c.spills, `gswap${runIndex}`);
      const swap = swapper(folders, sentinel());
      // Every line of the sentinel's same-named files holds "sentinel"; no blob does.
      const result = await run(['grep', 'sentinel', '--engine', engine, '--max', '100000', '--json', '--no-default-roots', '--root', c.spills], { env: c.env, timeoutMs: 60_000 });
      await swap.stop();
      expect(result.timedOut).toBe(false);
      expect(result.code, result.stderr).toBe(1); // nothing matched, as grep says it
      const out = JSON.parse(result.stdout.toString('utf8')) as { matches: Array<{ path: string; text: string }> };
      expect(out.matches, `run ${runIndex}: lines of files outside the roots were printed`).toEqual([]);
    }
  });

  it.each(['node', 'rg'])('grep (%s engine), a Claude Code session folder above tool-results swapped: no line from outside (12 runs)', async (engine) => {
    for (let runIndex = 0; runIndex < 12; runIndex++) {
      const c = await caseDirs(base(), `grep-${engine}-above-${runIndex}`);
      const uuid = `00000000-0000-4000-8000-0000000001${String(runIndex).padStart(2, '0')}`;
      const project = path.join(c.claudeProjects, '-home-dev-w');
      await fsp.mkdir(project, { recursive: true });
      await fsp.writeFile(path.join(project, `${uuid}.jsonl`), JSON.stringify({ type: 'user', sessionId: uuid, cwd: '/w', message: { content: 'hi' } }) + '\n');
      for (const name of SENTINEL_NAMES) await write(path.join(project, uuid, 'tool-results', name), `blob ${name}\n`);
      // The blob folder itself is never a symlink: the folder above it becomes one, to a tree of the same shape.
      const swap = swapper([path.join(project, uuid)], path.join(sentinel(), 'nested'));
      // Every line of the sentinel's nested files holds "nested"; no blob does.
      const result = await run(['grep', 'nested', '--engine', engine, '--max', '100000', '--json'], { env: c.env, timeoutMs: 60_000 });
      await swap.stop();
      expect(result.timedOut).toBe(false);
      expect(result.code, result.stderr).toBe(1); // nothing matched, as grep says it
      const out = JSON.parse(result.stdout.toString('utf8')) as { matches: Array<{ path: string; text: string }> };
      expect(out.matches, `run ${runIndex}: lines of files outside the roots were printed`).toEqual([]);
    }
  });

  it.each([[[]], [['--lines', '1:1']]])('show %j prints a blob or refuses it, never a same-named file outside the roots (6 runs of 10)', async (extra) => {
    let printed = 0;
    for (let runIndex = 0; runIndex < 6; runIndex++) {
      const c = await caseDirs(base(), `show-swap-${extra.length}-${runIndex}`);
      const folder = path.join(c.spills, `session-sswap${runIndex}`);
      const names = SENTINEL_NAMES.slice(0, 10);
      await spillwaySession(folder, `sswap-${runIndex}`, names);
      const swap = swapper([folder], sentinel());
      // The spills root is a default root: show needs no flag to know it.
      const results = await Promise.all(names.map((name) => run(['show', path.join(folder, name), ...extra], { env: c.env, timeoutMs: 60_000 })));
      await swap.stop();
      results.forEach((r, i) => {
        expect(r.timedOut).toBe(false);
        if (r.code !== 0) return;
        printed++;
        expect(r.stdout.toString('utf8'), `run ${runIndex}: a file outside the roots was printed`).toBe(`blob ${names[i]}\n`);
      });
    }
    // Not every show was refused: the folder was in place for a good share of them.
    expect(printed).toBeGreaterThan(0);
  });
});

describe('concurrent spills', () => {
  it('16 spills of 5 bodies into one session write 5 blobs (2 rounds)', async () => {
    for (let round = 0; round < 2; round++) {
      const c = await caseDirs(base(), `dedup-${round}`);
      const bodies = Array.from({ length: 5 }, (_, i) => `body ${i} round ${round}\n` + `${i}`.repeat(10_000) + '\n');
      const runs = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          run(['spill', '--session', 'dedup', '--tool', 'Bash', '--call-id', `c${i}`, '--json'], { env: c.env, input: bodies[i % 5]!, timeoutMs: 60_000 }),
        ),
      );
      for (const r of runs) expect(r.timedOut).toBe(false);
      const outs = runs.map((r) => JSON.parse(r.stdout.toString('utf8')) as { spilled: boolean; ref?: { locator: string } });
      expect(outs.every((o) => o.spilled)).toBe(true);
      const blobs = (await fsp.readdir(sessionFolder(c.spills, 'dedup'))).filter((n) => !n.startsWith('.') && n !== 'spillway.jsonl');
      expect(blobs, `round ${round}`).toHaveLength(5);
      expect(new Set(outs.map((o) => o.ref!.locator)).size).toBe(5);
    }
  });
});
