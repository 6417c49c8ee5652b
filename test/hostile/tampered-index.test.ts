// An index edited by hand (or by anything that can write the user's cache):
// rows naming files outside the roots, and a stored folder listing naming an
// outside folder as a child, must not make `list` or `grep` show or read
// anything outside the roots; the sessions are described again instead.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { storedPaths } from '../../src/catalog/index/path-table';
import { backdate } from '../integration/catalog/helpers';
import { caseDirs, hostileFile, run, SECRET, write, type CaseDirs } from './helpers';

const { base, sentinel } = hostileFile('tampered-index');

/**
 * Rewrite an index file's lines, keeping its trailer's lengths true. `edit` changes each line's description; the
 * part a scan checks is made to agree with it (as one who knows the format would), and what `list --json` prints,
 * kept at the end of the line, is left as it was unless `listing` changes it (its fields, then each blob's JSON).
 */
async function tamper(file: string, edit: (entries: any[], trailer: any) => void, listing?: (parts: string[]) => void): Promise<void> {
  const lines = (await fsp.readFile(file, 'utf8')).split('\n').filter(Boolean);
  const trailer = JSON.parse(lines.pop()!);
  const parts = lines.map((l) => l.split('\t'));
  const entries = parts.map((p) => JSON.parse(p[1]!));
  edit(entries, trailer);
  const out = parts.map((p, i) => {
    const entry = entries[i];
    const checked = JSON.parse(p[0]!);
    // A stored row is [folder or path, name, kind, tool, toolCallId, args, bytes, createdAt, mtimeMs, ...].
    if (entry.described) Object.assign(checked.described, { folders: entry.described.blobs.folders, rows: entry.described.blobs.rows.map((r: unknown[]) => [r[0], r[1], r[6], r[8]]) });
    const listed = p.slice(2);
    listing?.(listed);
    return [JSON.stringify(checked), JSON.stringify(entry), ...listed].join('\t') + '\n';
  });
  trailer.lengths = out.map((l) => Buffer.byteLength(l));
  await fsp.writeFile(file, out.join('') + JSON.stringify(trailer) + '\n');
}

/** One Claude Code session with one blob, listed once (which writes the index); its project folder and blob. */
async function listedSession(c: CaseDirs, id: string): Promise<{ project: string; blob: string }> {
  const project = path.join(c.claudeProjects, '-work');
  await write(path.join(project, `${id}.jsonl`), JSON.stringify({ type: 'user', sessionId: id, cwd: '/work', message: { role: 'user', content: 'hi' } }) + '\n');
  const blob = await write(path.join(project, id, 'tool-results', 'toolu_01.txt'), 'inside blob\n');
  await backdate(c.dir);
  expect((await run(['list', '--json'], { env: c.env })).code).toBe(0);
  return { project, blob };
}

describe('a tampered index', () => {
  it('never makes list or grep show or read a file outside the roots', async () => {
    const c = await caseDirs(base(), 'tampered');
    const id = '00000000-0000-4000-8000-0000000000aa';
    const { project } = await listedSession(c, id);
    const cache = path.join(c.home, '.cache', 'spillway');
    const [indexFile] = (await fsp.readdir(cache)).filter((n) => n.startsWith('catalog-')).map((n) => path.join(cache, n));
    const secret = path.join(sentinel(), 'secret.txt');
    const outsideProject = path.join(c.dir, 'outside', '-elsewhere');
    await write(path.join(outsideProject, id.replace('aa', 'bb'), 'tool-results', 'toolu_02.txt'), `${SECRET} in a project outside the roots\n`);
    // Old enough that its stats prove it unchanged (a recent mtime would have it described again anyway).
    await backdate(sentinel());
    const stat = await fsp.lstat(secret);
    const transcriptStat = await fsp.lstat(path.join(project, `${id}.jsonl`));
    await tamper(indexFile!, (entries, trailer) => {
      // A row naming the outside file by its whole path, and one reaching it with '..'.
      const rows = entries[0].described.blobs.rows;
      const dotted = path.join(project, id, 'tool-results', path.relative(path.join(project, id, 'tool-results'), secret));
      for (const where of [secret, dotted]) rows.push([where, 'secret.txt', 'tool-result', null, null, null, stat.size, '2020-01-01T00:00:00.000Z', stat.mtimeMs, null, 'none', null, null]);
      // A row under the session's own blob folder whose name climbs out of it.
      rows.push([0, path.relative(path.join(project, id, 'tool-results'), secret), 'tool-result', null, null, null, stat.size, '2020-01-01T00:00:00.000Z', stat.mtimeMs, null, 'none', null, null]);

      // The root's stored listing names an outside folder shaped like a project as one of its children to walk
      // (the trailer names paths by their numbers in its table: whole, or [its folder's number, its name]).
      const paths = storedPaths(trailer.paths)!;
      const rootListing = trailer.listings.find((listing: [number]) => paths[listing[0]] === c.claudeProjects);
      expect(rootListing).toBeDefined();
      rootListing[3].push(trailer.paths.push(outsideProject) - 1);
    });

    const listed = await run(['list', '--json'], { env: c.env });
    const grepped = await run(['grep', SECRET, '--engine', 'node'], { env: c.env });
    const viaRg = await run(['grep', SECRET], { env: c.env });
    for (const r of [listed, grepped, viaRg]) {
      expect(r.timedOut).toBe(false);
      expect(r.stdout.toString()).not.toContain(sentinel());
      expect(r.stdout.toString()).not.toContain(outsideProject);
      expect(r.stdout.toString()).not.toContain(SECRET);
    }
    const blobs = (JSON.parse(listed.stdout.toString()) as { sessions: Array<{ blobs: Array<{ path: string }> }> }).sessions.flatMap((s) => s.blobs.map((b) => b.path));
    expect(blobs).toEqual([path.join(project, id, 'tool-results', 'toolu_01.txt')]);

    // What `list --json` prints, kept in the line: the blob's path swapped for the outside file's, or for one that
    // climbs out of the blob folder (escaped, as JSON may write '/'), the session's folder for an outside one.
    const inside = JSON.stringify(path.join(project, id, 'tool-results', 'toolu_01.txt'));
    const climbing = JSON.stringify(path.join(project, id, 'tool-results') + '/').slice(0, -1) + '..\\u002f..\\u002f..\\u002f..\\u002foutside\\u002fsecret"';
    const pristine = await fsp.readFile(indexFile!);
    const swaps = [
      (kept: string[]) => kept.forEach((b, i) => (kept[i] = i === 0 ? b : b.replace(inside, JSON.stringify(secret)))),
      (kept: string[]) => kept.forEach((b, i) => (kept[i] = i === 0 ? b : b.replace(inside, climbing))),
      (kept: string[]) => kept.length > 0 && (kept[0] = kept[0]!.replace(JSON.stringify(path.join(project, id)), JSON.stringify(outsideProject))),
    ];
    for (const swap of swaps) {
      await fsp.writeFile(indexFile!, pristine);
      await tamper(indexFile!, () => undefined, (kept) => void swap(kept));
      expect((await fsp.readFile(indexFile!)).equals(pristine)).toBe(false);
      const printed = await run(['list', '--json'], { env: c.env });
      expect(printed.stdout.toString()).not.toContain(sentinel());
      expect(printed.stdout.toString()).not.toContain('u002f');
      expect(printed.stdout.toString()).not.toContain(outsideProject);
      expect((JSON.parse(printed.stdout.toString()) as { sessions: Array<{ blobs: Array<{ path: string }> }> }).sessions.flatMap((s) => s.blobs.map((b) => b.path))).toEqual(blobs);
    }

    // Inside the roots: a row naming the session's own transcript as a blob, for clean to delete.
    const transcript = path.join(project, `${id}.jsonl`);
    await tamper(indexFile!, (entries) => {
      const entry = entries.find((e) => e.described?.session?.id === id);
      entry.described.blobs.rows.push([transcript, `${id}.jsonl`, 'tool-result', null, null, null, transcriptStat.size, '2020-01-01T00:00:00.000Z', transcriptStat.mtimeMs, null, 'none', null, null]);
    });
    const cleaned = await run(['clean', '--max-total', '0', '--yes'], { env: c.env });
    expect(cleaned.code).toBe(0);
    expect(await fsp.readFile(transcript, 'utf8')).toContain(id);
  });
});

describe('an index folder others may write to', () => {
  it('is neither written nor read: another user could swap the index for one they made', async () => {
    const c = await caseDirs(base(), 'open-cache');
    // A good index made where the user keeps it, then moved into a folder anyone may write to (and reached
    // through a symlink there), with a row added by hand that lists a file outside the roots.
    const { blob } = await listedSession(c, '00000000-0000-4000-8000-0000000000cc');
    const cache = path.join(c.home, '.cache', 'spillway');
    const [name] = (await fsp.readdir(cache)).filter((n) => n.startsWith('catalog-'));
    const open = path.join(c.dir, 'open-to-all');
    await fsp.rename(cache, open);
    await fsp.chmod(open, 0o777);
    const secret = path.join(sentinel(), 'secret.txt');
    await tamper(path.join(open, name!), (entries) => {
      entries[0].described.blobs.rows.push([secret, 'secret.txt', 'tool-result', null, null, null, 1, '2020-01-01T00:00:00.000Z', 0, null, 'none', null, null]);
    });
    const planted = await fsp.readFile(path.join(open, name!));
    for (const place of ['the folder itself', 'a symlink to it'] as const) {
      if (place === 'a symlink to it') await fsp.symlink(open, cache);
      else await fsp.rename(open, cache);
      const listed = await run(['list', '--json'], { env: c.env });
      expect(listed.code).toBe(0);
      expect(listed.stderr).toContain('is writable by others');
      const blobs = (JSON.parse(listed.stdout.toString()) as { sessions: Array<{ blobs: Array<{ path: string }> }> }).sessions.flatMap((s) => s.blobs.map((b) => b.path));
      expect(blobs, place).toEqual([blob]);
      // Not rewritten there either: what is in the folder is what was planted.
      expect(await fsp.readdir(place === 'a symlink to it' ? open : cache)).toEqual([name]);
      expect((await fsp.readFile(path.join(place === 'a symlink to it' ? open : cache, name!))).equals(planted)).toBe(true);
      if (place === 'the folder itself') await fsp.rename(cache, open);
    }
  });
});
