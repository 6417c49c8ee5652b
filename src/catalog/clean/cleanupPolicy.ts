// The automatic cleanup policy: one small JSON file that the VS Code
// extension writes from its settings and `spillway clean --policy` (a cron
// job) reads, so both apply the same limits and respect the same pins.
//
//   $XDG_CONFIG_HOME/spillway/cleanup.json  (default ~/.config/spillway/cleanup.json)
//   {"maxAgeDays": 30, "maxTotalBytes": 5368709120, "pinned": ["/abs/blob.txt"]}
//
// Never touched: a session written to in the last hour (an agent may still
// read its blobs) and a pinned blob.
import { randomBytes } from 'node:crypto';
import { constants as C, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CleanableSession, CleanPlan, CleanRequest } from '../types';
import { MANIFEST_NAME } from '../../spill/manifest';
import { readSettingsText } from '../../spill/regular-file';

export interface CleanupPolicy {
  maxAgeDays?: number;
  maxTotalBytes?: number;
  /** Absolute blob paths never deleted by the policy. */
  pinned: string[];
}

/** A session changed more recently than this is left alone. */
export const RECENT_SESSION_MS = 3_600_000;

export function cleanupPolicyPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME?.trim() || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'spillway', 'cleanup.json');
}

/** The policy file's content checked field by field; a clear error names what is wrong. */
export function parseCleanupPolicy(text: string, where = 'cleanup policy'): CleanupPolicy {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: not JSON (${(err as Error).message})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`${where}: expected an object`);
  const o = raw as Record<string, unknown>;
  const positive = (key: string): number | undefined => {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new Error(`${where}: ${key} must be a number above 0`);
    return v;
  };
  const pinned = o.pinned ?? [];
  if (!Array.isArray(pinned) || !pinned.every((p) => typeof p === 'string' && path.isAbsolute(p))) throw new Error(`${where}: pinned must be a list of absolute paths`);
  const maxAgeDays = positive('maxAgeDays');
  const maxTotalBytes = positive('maxTotalBytes');
  return { ...(maxAgeDays !== undefined ? { maxAgeDays } : {}), ...(maxTotalBytes !== undefined ? { maxTotalBytes: Math.round(maxTotalBytes) } : {}), pinned: [...new Set(pinned as string[])] };
}

/** undefined when there is no policy file. */
export async function readCleanupPolicy(env: NodeJS.ProcessEnv = process.env): Promise<CleanupPolicy | undefined> {
  const file = cleanupPolicyPath(env);
  let text: string;
  try {
    text = await readSettingsText(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseCleanupPolicy(text, file);
}

/** Written whole: a new 0600 file (exclusive, in a 0700 folder) renamed over the old one. */
export async function writeCleanupPolicy(policy: CleanupPolicy, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const file = cleanupPolicyPath(env);
  await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = path.join(path.dirname(file), `.cleanup.json.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fsp.open(temp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(parseCleanupPolicy(JSON.stringify(policy)), null, 2)}\n`, 'utf8');
  } finally {
    await handle.close();
  }
  await fsp.rename(temp, file);
  return file;
}

export interface PolicyPlan extends CleanPlan {
  /** Blobs the limits chose but the policy keeps: in a session changed in the last hour, or pinned. */
  kept: { recent: number; pinned: number };
}

/** What the policy needs of a catalog: its sessions and its plans (the Catalog class has both). */
export interface CleanPlanner {
  sessions(): readonly CleanableSession[];
  planClean(request: CleanRequest, sessions?: readonly CleanableSession[]): Promise<CleanPlan>;
}

/** What the policy would delete now among `sessions` (by default the ones the catalog holds; nothing is touched). */
export async function planPolicyClean(catalog: CleanPlanner, policy: CleanupPolicy, now = Date.now(), sessions: readonly CleanableSession[] = catalog.sessions()): Promise<PolicyPlan> {
  const empty = { request: { kind: 'retention' as const }, items: [], bytes: 0, refused: [], kept: { recent: 0, pinned: 0 } };
  if (policy.maxAgeDays === undefined && policy.maxTotalBytes === undefined) return empty;
  const plan = await catalog.planClean(
    {
      kind: 'retention',
      ...(policy.maxAgeDays !== undefined ? { olderThanMs: policy.maxAgeDays * 86_400_000 } : {}),
      ...(policy.maxTotalBytes !== undefined ? { maxTotalBytes: policy.maxTotalBytes } : {}),
      now,
    },
    sessions,
  );
  const byKey = new Map(sessions.map((s) => [s.key, s]));
  const recent = new Set<string>();
  for (const key of new Set(plan.items.map((i) => i.sessionKey))) {
    const session = byKey.get(key);
    if (!session) continue;
    const transcript = session.transcript ? await mtimeOf(session.transcript) : 0;
    // A reused blob is written to only through its folder's manifest (the engine's dedup): that is a write too.
    let manifests = 0;
    for (const folder of new Set(session.blobs.map((b) => path.dirname(b.path)))) manifests = Math.max(manifests, await mtimeOf(path.join(folder, MANIFEST_NAME)));
    // Not Math.max(...blobs): a session of a few hundred thousand blobs would overflow the call's arguments.
    const changed = session.blobs.reduce((max, b) => Math.max(max, b.mtimeMs), Math.max(Date.parse(session.updatedAt) || 0, transcript, manifests));
    if (now - changed < RECENT_SESSION_MS) recent.add(key);
  }
  const pinned = new Set(policy.pinned.map((p) => path.resolve(p)));
  const kept = { recent: 0, pinned: 0 };
  const items = plan.items.filter((i) => {
    if (pinned.has(path.resolve(i.path))) kept.pinned++;
    else if (recent.has(i.sessionKey)) kept.recent++;
    else return true;
    return false;
  });
  return { ...plan, items, bytes: items.reduce((n, i) => n + i.bytes, 0), kept };
}

/** A file's mtime (ms), 0 when it cannot be stat'ed (not followed through a symlink). */
function mtimeOf(file: string): Promise<number> {
  return fsp.lstat(file).then((s) => s.mtimeMs, () => 0);
}
