// Safe deletion: one blob, a session's blobs, or by retention. Nothing outside
// the known roots, nothing reached through a symlink, no file with other hard
// links; the manifests follow. Each folder is held open once, refused unless
// it was found at its place below its root (rooted-read.ts), and every file in
// it is checked and deleted through that hold: a folder swapped for a symlink
// between the check and the deletion cannot redirect it.
import { constants as C, lstatSync, promises as fsp, unlinkSync, type Stats } from 'node:fs';
import * as path from 'node:path';
import { openBelow, withDir, type AnchoredDir, type HeldFolder } from '../../spill/anchored-dir';
import { MANIFEST_NAME, parseManifest } from '../../spill/manifest';
import { openRegularFile } from '../../spill/regular-file';
import { deepestRoot } from '../../spill/inside';
import { pauser } from '../shared/pause';
import { RootedReads } from '../read/rooted-read';
import { cmp } from '../shared/cmp';
import type { CleanableBlob, CleanableSession, CleanExecuteOptions, CleanItem, CleanPlan, CleanRequest, CleanResult } from '../types';
import { isTempName } from '../../spill/internal-names';

// Loaded when a manifest is rewritten, not at every command's start (the catalog, and so `list`, carries this module).
const crypto = (): typeof import('node:crypto') => require('node:crypto');

/** A known root: a folder, or a shared folder where only some file names may be deleted (`KnownRoot.files`). */
export type CleanRoot = string | HoldingRoot;

/** A known root as an object; holdingRoots gives each root so, its path resolved. */
type HoldingRoot = { path: string; files?: RegExp };

/** Roots resolved once per plan or clean: a plan checks every blob against every root. */
function holdingRoots(roots: readonly CleanRoot[]): HoldingRoot[] {
  return roots.map((r) => (typeof r === 'string' ? { path: path.resolve(r) } : { path: path.resolve(r.path), ...(r.files ? { files: r.files } : {}) }));
}

/** The deepest root holding `target` (the root itself only with `orSelf`). */
function rootHolding(target: string, roots: readonly HoldingRoot[], orSelf = false): HoldingRoot | undefined {
  return deepestRoot(roots, path.resolve(target), orSelf);
}

/** Why `target` may not be deleted, or undefined when it may. */
export async function refusal(target: string, roots: readonly CleanRoot[]): Promise<string | undefined> {
  let reason: string | undefined;
  await throughFolders([target], (t) => t, holdingRoots(roots), (_, checked) => void ('reason' in checked && (reason = checked.reason)));
  return reason;
}

/** A target checked in its held folder (`at` names it through the hold, to delete it by), or why it may not be deleted. */
type Checked = { at: string } | { reason: string };

/**
 * Check each target and hand it to `visit` with its folder held: each folder
 * is held once for every target in it (a retention clean names tens of
 * thousands of files in a few thousand folders), refused unless found at its
 * place below its root (RootedReads.holdFolder), and each file is checked
 * through it. Targets are visited folder by folder.
 */
async function throughFolders<T>(targets: readonly T[], pathOf: (target: T) => string, roots: readonly HoldingRoot[], visit: (target: T, checked: Checked) => void | Promise<void>): Promise<void> {
  const folders = new Map<string, [T, string][]>();
  for (const target of targets) {
    const named = pathOf(target);
    const file = path.resolve(named);
    const holding = rootHolding(file, roots);
    if (!holding) await visit(target, { reason: 'outside the known roots' });
    // `a/link/../b` is checked as `a/b` but the kernel follows `link` first: only the path itself is judged.
    else if (path.isAbsolute(named) && named !== file) await visit(target, { reason: 'not a normalized path' });
    // In a shared folder (TMPDIR) only the agent's own output files, directly in it.
    else if (holding.files && (path.dirname(file) !== holding.path || !holding.files.test(path.basename(file)))) {
      await visit(target, { reason: 'not an agent output file of a shared folder' });
    } else {
      const folder = path.dirname(file);
      let files = folders.get(folder);
      if (!files) folders.set(folder, (files = []));
      files.push([target, path.basename(file)]);
    }
  }
  const reads = new RootedReads(roots.map((r) => r.path));
  const pause = pauser();
  // Loaded only when a temp is named: it hashes its host at load (node:crypto, a few ms of every command's start).
  const { isStaleTemp } = [...folders.values()].some((files) => files.some(([, name]) => isTempName(name))) ? await import('../../spill/internal-files.js') : { isStaleTemp: () => true };
  for (const [folder, files] of folders) {
    await pause();
    let held: HeldFolder;
    try {
      held = reads.holdFolder(folder);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const reason = code === 'ENOENT' ? 'no such file' : code === 'ELOOP' ? 'reached through a symlink' : code === 'ENOTDIR' ? 'its folder is not a folder' : `cannot open its folder (${code})`;
      for (const [target] of files) await visit(target, { reason });
      continue;
    }
    try {
      const base = held.fd === undefined ? folder : `/proc/self/fd/${held.fd}`;
      for (const [target, name] of files) {
        await pause();
        const at = path.join(base, name);
        // Synchronous: one lstat costs less than a promise around it; the pauser lets the event loop in.
        let stat: Stats | undefined;
        try {
          stat = lstatSync(at, { throwIfNoEntry: false });
        } catch {
          stat = undefined;
        }
        const reason = !stat
          ? 'no such file'
          : stat.isSymbolicLink()
            ? 'is a symlink'
            : !stat.isFile()
              ? 'not a regular file'
              : stat.nlink > 1
                ? `has ${stat.nlink} hard links`
                : isTempName(name) && !isStaleTemp(name, stat.mtimeMs)
                  ? 'a spill still being written (its writer runs)'
                  : undefined;
        await visit(target, reason ? { reason } : { at });
      }
    } finally {
      held.close();
    }
  }
}

/** `folder` (inside `root`) opened one step at a time from the root, refusing symlinks on the way. */
function openFolderBelow(root: string, folder: string): Promise<AnchoredDir> {
  const rel = path.relative(root, folder);
  return openBelow(root, rel === '' ? [] : rel.split(path.sep));
}

function item(blob: CleanableBlob): CleanItem {
  return { path: blob.path, bytes: blob.bytes, sessionKey: blob.sessionKey, mtimeMs: blob.mtimeMs };
}

/** What `request` would delete among `sessions` (nothing is touched). */
export async function planClean(request: CleanRequest, sessions: readonly CleanableSession[], roots: readonly CleanRoot[]): Promise<CleanPlan> {
  const all = sessions.flatMap((s) => s.blobs);
  const byPath = new Map(all.map((b) => [b.path, b]));
  const refused: CleanPlan['refused'] = [];
  let candidates: CleanableBlob[] = [];
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
    // Ties by path, byte order: the same choice whatever the locale (and faster than localeCompare).
    const oldestFirst = [...all].sort((a, b) => a.mtimeMs - b.mtimeMs || cmp(a.path, b.path));
    const chosen = new Set<CleanableBlob>();
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
  const reasons = new Map<CleanableBlob, string>();
  await throughFolders(candidates, (blob) => blob.path, holdingRoots(roots), (blob, checked) => void ('reason' in checked && reasons.set(blob, checked.reason)));
  const items: CleanItem[] = [];
  for (const blob of candidates) {
    const reason = reasons.get(blob);
    if (reason) refused.push({ path: blob.path, reason });
    else items.push(item(blob));
  }
  return { request, items, bytes: items.reduce((sum, i) => sum + i.bytes, 0), refused };
}

/** Delete (or trash) each item after checking it again; rewrite the manifests that named them. */
export async function executeClean(plan: CleanPlan, roots: readonly CleanRoot[], options: CleanExecuteOptions = {}): Promise<CleanResult> {
  const result: CleanResult = { deleted: [], bytes: 0, failed: [], manifestsRewritten: [] };
  // Each item's fate: deleted now, found already gone (the manifest still follows), or why it failed.
  const outcomes = new Map<CleanItem, 'deleted' | 'gone' | { reason: string }>();
  const known = holdingRoots(roots);
  await throughFolders(plan.items, (entry) => entry.path, known, async (entry, checked) => {
    if ('reason' in checked) {
      outcomes.set(entry, checked.reason === 'no such file' ? 'gone' : checked);
      return;
    }
    try {
      // The trash takes a path (it is resolved once more there); unlink acts through the opened folder.
      if (options.trash) await options.trash(entry.path);
      else unlinkSync(checked.at);
      outcomes.set(entry, 'deleted');
    } catch (err) {
      outcomes.set(entry, { reason: (err as Error).message });
    }
  });
  for (const entry of plan.items) {
    const outcome = outcomes.get(entry)!;
    if (typeof outcome === 'object') result.failed.push({ path: entry.path, reason: outcome.reason });
    else result.deleted.push(entry);
    if (outcome === 'deleted') result.bytes += entry.bytes;
  }
  for (const dir of await manifestsNaming(result.deleted.map((d) => d.path), known)) {
    try {
      // A folder swapped for a symlink (e.g. after the deletion was planned)
      // must not lead the rewrite to a manifest outside the roots.
      const rewritten = await withDir(openFolderBelow(rootHolding(dir, known, true)!.path, dir), dropMissingRecords);
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
async function manifestsNaming(files: string[], roots: readonly HoldingRoot[]): Promise<string[]> {
  const dirs = new Set<string>();
  const manifestPlace = (dir: string): boolean => {
    const holding = rootHolding(dir, roots, true);
    return holding !== undefined && !holding.files;
  };
  const parents = new Set<string>();
  for (const folder of new Set(files.map((file) => path.dirname(file)))) {
    if (!manifestPlace(folder)) continue;
    dirs.add(folder);
    parents.add(path.dirname(folder));
  }
  for (const parent of parents) {
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
    const temp = dir.at(`.${MANIFEST_NAME}.${crypto().randomBytes(6).toString('hex')}.tmp`);
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
