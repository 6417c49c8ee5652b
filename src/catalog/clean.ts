// Safe deletion: one blob, a session's blobs, or by retention. Nothing outside
// the known roots, nothing reached through a symlink, no file with other hard
// links; the manifests follow. Each file's folder is opened once, step by step
// from its root, and the file is checked and deleted through that opened
// folder (anchored-dir.ts): a folder swapped for a symlink between the check
// and the deletion cannot redirect it.
import { randomBytes } from 'node:crypto';
import { constants as C, promises as fsp, type Stats } from 'node:fs';
import * as path from 'node:path';
import { openBelow, withDir, type AnchoredDir } from '../spill/anchored-dir';
import { MANIFEST_NAME, parseManifest } from '../spill/manifest';
import { openRegularFile } from '../spill/regular-file';
import type { BlobInfo, CleanExecuteOptions, CleanItem, CleanPlan, CleanRequest, CleanResult, SessionInfo } from './types';

/** A known root: a folder, or a shared folder where only some file names may be deleted (`KnownRoot.files`). */
export type CleanRoot = string | { path: string; files?: RegExp };

/** The deepest root holding `target` (the root itself only with `orSelf`). */
function rootHolding(target: string, roots: readonly CleanRoot[], orSelf = false): { path: string; files?: RegExp } | undefined {
  let best: { path: string; files?: RegExp } | undefined;
  for (const r of roots) {
    const root = typeof r === 'string' ? { path: path.resolve(r) } : { path: path.resolve(r.path), ...(r.files ? { files: r.files } : {}) };
    if ((orSelf || root.path !== target) && inside(root.path, target) && (!best || root.path.length > best.path.length)) best = root;
  }
  return best;
}

/** Why `target` may not be deleted, or undefined when it may. */
export async function refusal(target: string, roots: readonly CleanRoot[]): Promise<string | undefined> {
  const opened = await openTarget(target, roots);
  if ('reason' in opened) return opened.reason;
  await opened.dir.close();
  return undefined;
}

/** The folder of `target` opened below its root, with the file checked in it; or why not. */
async function openTarget(target: string, roots: readonly CleanRoot[]): Promise<{ dir: AnchoredDir; name: string } | { reason: string }> {
  const file = path.resolve(target);
  const holding = rootHolding(file, roots);
  if (!holding) return { reason: 'outside the known roots' };
  // In a shared folder (TMPDIR) only the agent's own output files, directly in it.
  if (holding.files && (path.dirname(file) !== holding.path || !holding.files.test(path.basename(file)))) {
    return { reason: 'not an agent output file of a shared folder' };
  }
  let dir: AnchoredDir;
  try {
    dir = await openFolderBelow(holding.path, path.dirname(file));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { reason: 'no such file' };
    return { reason: code === 'ELOOP' || code === 'ENOTDIR' ? 'reached through a symlink' : 'its folder vanished' };
  }
  const name = path.basename(file);
  const stat = await fsp.lstat(dir.at(name)).catch(() => undefined);
  const reason = !stat ? 'no such file' : stat.isSymbolicLink() ? 'is a symlink' : !stat.isFile() ? 'not a regular file' : stat.nlink > 1 ? `has ${stat.nlink} hard links` : undefined;
  if (reason) {
    await dir.close();
    return { reason };
  }
  return { dir, name };
}

/** `folder` (inside `root`) opened one step at a time from the root, refusing symlinks on the way. */
function openFolderBelow(root: string, folder: string): Promise<AnchoredDir> {
  const rel = path.relative(root, folder);
  return openBelow(root, rel === '' ? [] : rel.split(path.sep));
}

function inside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function item(blob: BlobInfo): CleanItem {
  return { path: blob.path, bytes: blob.bytes, sessionKey: blob.sessionKey, mtimeMs: blob.mtimeMs };
}

/** What `request` would delete among `sessions` (nothing is touched). */
export async function planClean(request: CleanRequest, sessions: SessionInfo[], roots: readonly CleanRoot[]): Promise<CleanPlan> {
  const all = sessions.flatMap((s) => s.blobs);
  const byPath = new Map(all.map((b) => [b.path, b]));
  const refused: CleanPlan['refused'] = [];
  let candidates: BlobInfo[] = [];
  if (request.kind === 'blobs') {
    for (const p of request.paths) {
      const blob = byPath.get(path.resolve(p));
      if (blob) candidates.push(blob);
      else refused.push({ path: p, reason: (await refusal(p, roots)) ?? 'not a blob in the catalog' });
    }
  } else if (request.kind === 'session') {
    const session = sessions.find((s) => s.key === request.sessionKey);
    if (!session) throw new Error(`no session ${request.sessionKey}`);
    candidates = [...session.blobs];
  } else {
    const now = request.now ?? Date.now();
    const oldestFirst = [...all].sort((a, b) => a.mtimeMs - b.mtimeMs || a.path.localeCompare(b.path));
    const chosen = new Set<BlobInfo>();
    if (request.olderThanMs !== undefined) {
      for (const blob of oldestFirst) if (blob.mtimeMs < now - request.olderThanMs) chosen.add(blob);
    }
    if (request.maxTotalBytes !== undefined) {
      let total = all.reduce((sum, b) => sum + b.bytes, 0) - [...chosen].reduce((sum, b) => sum + b.bytes, 0);
      for (const blob of oldestFirst) {
        if (total <= request.maxTotalBytes) break;
        if (chosen.has(blob)) continue;
        chosen.add(blob);
        total -= blob.bytes;
      }
    }
    candidates = oldestFirst.filter((b) => chosen.has(b));
  }
  const items: CleanItem[] = [];
  for (const blob of candidates) {
    const reason = await refusal(blob.path, roots);
    if (reason) refused.push({ path: blob.path, reason });
    else items.push(item(blob));
  }
  return { request, items, bytes: items.reduce((sum, i) => sum + i.bytes, 0), refused };
}

/** Delete (or trash) each item after checking it again; rewrite the manifests that named them. */
export async function executeClean(plan: CleanPlan, roots: readonly CleanRoot[], options: CleanExecuteOptions = {}): Promise<CleanResult> {
  const result: CleanResult = { deleted: [], bytes: 0, failed: [], manifestsRewritten: [] };
  for (const entry of plan.items) {
    const opened = await openTarget(entry.path, roots);
    if ('reason' in opened) {
      if (opened.reason === 'no such file') result.deleted.push(entry); // already gone: the manifest still follows
      else result.failed.push({ path: entry.path, reason: opened.reason });
      continue;
    }
    try {
      // The trash takes a path (it is resolved once more there); unlink acts through the opened folder.
      if (options.trash) await options.trash(entry.path);
      else await fsp.unlink(opened.dir.at(opened.name));
      result.deleted.push(entry);
      result.bytes += entry.bytes;
    } catch (err) {
      result.failed.push({ path: entry.path, reason: (err as Error).message });
    } finally {
      await opened.dir.close();
    }
  }
  for (const dir of await manifestsNaming(result.deleted.map((d) => d.path), roots)) {
    try {
      // A folder swapped for a symlink (e.g. after the deletion was planned)
      // must not lead the rewrite to a manifest outside the roots.
      const rewritten = await withDir(openFolderBelow(rootHolding(dir, roots, true)!.path, dir), dropMissingRecords);
      if (rewritten) result.manifestsRewritten.push(path.join(dir, MANIFEST_NAME));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // folder or manifest gone meanwhile
      result.failed.push({ path: path.join(dir, MANIFEST_NAME), reason: `manifest not rewritten: ${(err as Error).message}` });
    }
  }
  return result;
}

/**
 * Folders whose manifest may name the deleted files: their own folder and its
 * siblings (`../tool-results/b1.txt`), only inside a known root and never in
 * a shared folder (a file deleted from TMPDIR must not touch TMPDIR's
 * neighbours, nor anything in TMPDIR that merely looks like a manifest).
 */
async function manifestsNaming(files: string[], roots: readonly CleanRoot[]): Promise<string[]> {
  const dirs = new Set<string>();
  const manifestPlace = (dir: string): boolean => {
    const holding = rootHolding(dir, roots, true);
    return holding !== undefined && !holding.files;
  };
  for (const file of files) {
    const folder = path.dirname(file);
    if (!manifestPlace(folder)) continue;
    dirs.add(folder);
    const parent = path.dirname(folder);
    for (const entry of await fsp.readdir(parent, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) dirs.add(path.join(parent, entry.name));
    }
  }
  const found: string[] = [];
  for (const dir of dirs) {
    if (!manifestPlace(dir)) continue;
    const stat = await fsp.lstat(path.join(dir, MANIFEST_NAME)).catch(() => undefined);
    if (stat?.isFile()) found.push(dir);
  }
  return found;
}

/**
 * Rewrite the manifest of the opened folder `dir` without the records whose
 * file is gone, keeping every other line byte for byte: a new file (0600,
 * exclusive) renamed over the old one, retried if a writer appended
 * meanwhile. A manifest that is not a regular file with one link is refused.
 * Returns whether it changed.
 */
export async function dropMissingRecords(dir: AnchoredDir): Promise<boolean> {
  const manifest = dir.at(MANIFEST_NAME);
  for (let attempt = 0; attempt < 5; attempt++) {
    const handle = await openRegularFile(manifest);
    let before: Stats;
    let text: string;
    try {
      before = await handle.stat();
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    const kept: string[] = [];
    let dropped = 0;
    for (const line of text.split('\n')) {
      const record = line.trim() ? parseManifest(line).records[0] : undefined;
      if (record && !(await exists(dir.relative(record.file)))) {
        dropped++;
        continue;
      }
      kept.push(line);
    }
    if (dropped === 0) return false;
    const temp = dir.at(`.${MANIFEST_NAME}.${randomBytes(6).toString('hex')}.tmp`);
    const out = await fsp.open(temp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
    try {
      await out.writeFile(kept.join('\n'), 'utf8');
      await out.sync();
    } finally {
      await out.close();
    }
    const now = await fsp.lstat(manifest);
    if (now.ino !== before.ino || now.size !== before.size || now.mtimeMs !== before.mtimeMs) {
      await fsp.unlink(temp); // a writer appended: read again
      continue;
    }
    await fsp.rename(temp, manifest);
    return true;
  }
  throw new Error('manifest kept changing');
}

async function exists(p: string): Promise<boolean> {
  try {
    await fsp.lstat(p);
    return true;
  } catch {
    return false;
  }
}
