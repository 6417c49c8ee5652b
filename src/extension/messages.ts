// Texts of confirmations and notices, built from plans and results. Pure, so
// the wording (count and bytes named) is unit-tested.

import type { CleanPlan, CleanResult } from '../catalog/types';
import { formatBytes } from './format';

/**
 * Where deleted blobs go: the trash; nowhere, by choice (`useTrash` off); or
 * nowhere because this window has none (remote and web windows), which the one
 * confirmation says, instead of a second dialog after a failed attempt.
 */
export type DeleteMode = 'trash' | 'permanent' | 'no-trash';

/** Remote windows (SSH, WSL, containers, code-server) and the web have no trash for the files the extension sees. */
export function deleteMode(useTrash: boolean, window: { remote: boolean; web: boolean; trashFailed?: boolean }): DeleteMode {
  if (!useTrash) return 'permanent';
  return window.remote || window.web || window.trashFailed ? 'no-trash' : 'trash';
}

/** `what` follows the count: `of session "x"`, `older than 7 days`. */
export function confirmCleanMessage(plan: CleanPlan, what: string, mode: DeleteMode): { message: string; detail: string; action: string } {
  const n = plan.items.length;
  const toTrash = mode === 'trash';
  const verb = toTrash ? 'Move' : 'Permanently delete';
  const where = toTrash ? ' to the trash' : '';
  const message = `${verb} ${n} blob${n === 1 ? '' : 's'} (${formatBytes(plan.bytes)}) ${what}${where}?`;
  const lines: string[] = [];
  if (mode === 'no-trash') lines.push('This window (remote or web) has no trash: the files are deleted for good.', '');
  lines.push(...plan.items.slice(0, 8).map((i) => i.path));
  if (plan.items.length > 8) lines.push(`… and ${plan.items.length - 8} more`);
  if (plan.refused.length) lines.push('', `${plan.refused.length} file(s) will be left alone: ${plan.refused[0]?.reason ?? ''}`);
  if (!toTrash) lines.push('', 'This cannot be undone.');
  return { message, detail: lines.join('\n'), action: toTrash ? 'Move to Trash' : 'Delete' };
}

export function cleanResultMessage(result: CleanResult, toTrash: boolean): string {
  const n = result.deleted.length;
  const done = `${toTrash ? 'Moved' : 'Deleted'} ${n} blob${n === 1 ? '' : 's'} (${formatBytes(result.bytes)})${toTrash ? ' to the trash' : ''}.`;
  if (!result.failed.length) return done;
  return `${done} ${result.failed.length} could not be deleted: ${result.failed[0]?.reason ?? ''}`;
}

/** Progress line while grepping: "3/22 blobs · 1 match". */
export function grepProgressMessage(filesDone: number, filesTotal: number, matches: number): string {
  return `${filesDone}/${filesTotal} blobs · ${matches} match${matches === 1 ? '' : 'es'}`;
}

/** What a retention choice deletes, as said in its confirmation: "older than 7 days", "older than the newest 1.0 GB". */
export function retentionPhrase(r: { olderThanMs: number } | { maxTotalBytes: number }): string {
  if ('maxTotalBytes' in r) return `older than the newest ${formatBytes(r.maxTotalBytes)}`;
  const days = r.olderThanMs / 86_400_000;
  const hours = r.olderThanMs / 3_600_000;
  const [n, unit] = Number.isInteger(days) ? [days, 'day'] : Number.isInteger(hours) ? [hours, 'hour'] : [Math.round(r.olderThanMs / 60_000), 'minute'];
  return `older than ${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** Retention choices of "Clean up...": "7d", "12h", "30m", "2GB". */
export function parseRetention(input: string): { olderThanMs: number } | { maxTotalBytes: number } | { error: string } {
  const text = input.trim().toLowerCase();
  const age = /^(\d+(?:\.\d+)?)\s*(d|days?|h|hours?|m|mins?|minutes?)$/.exec(text);
  if (age) {
    const n = Number(age[1]);
    const unit = age[2]?.startsWith('h') ? 3_600_000 : age[2]?.startsWith('m') ? 60_000 : 86_400_000;
    if (n <= 0) return { error: 'The age must be more than 0.' };
    return { olderThanMs: n * unit };
  }
  const size = /^(\d+(?:\.\d+)?)\s*(kb|mb|gb|tb)$/.exec(text);
  if (size) {
    const mult = { kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4 }[size[2] as 'kb' | 'mb' | 'gb' | 'tb'];
    return { maxTotalBytes: Math.round(Number(size[1]) * mult) };
  }
  return { error: 'Use an age like 7d / 12h / 30m, or a total size to keep like 2GB.' };
}

/**
 * The cleanup settings as the policy file's limits: "30d" -> 30 days, "5GB"
 * -> bytes; an empty setting is no limit. Errors name the setting.
 */
export function policyLimits(maxAge: string, maxTotalSize: string): { maxAgeDays?: number; maxTotalBytes?: number } | { error: string } {
  const out: { maxAgeDays?: number; maxTotalBytes?: number } = {};
  if (maxAge) {
    const r = parseRetention(maxAge);
    if (!('olderThanMs' in r)) return { error: `spillway.cleanup.maxAge: "${maxAge}" is not an age (use 30d or 12h).` };
    out.maxAgeDays = r.olderThanMs / 86_400_000;
  }
  if (maxTotalSize) {
    const r = parseRetention(maxTotalSize);
    if (!('maxTotalBytes' in r)) return { error: `spillway.cleanup.maxTotalSize: "${maxTotalSize}" is not a size (use 5GB or 500MB).` };
    out.maxTotalBytes = r.maxTotalBytes;
  }
  return out;
}

/** The first automatic cleanup asks before it deletes: what it would delete, and what it keeps. */
export function autoCleanupQuestion(plan: CleanPlan & { kept: { recent: number; pinned: number } }, limits: string): string {
  const n = plan.items.length;
  const kept = plan.kept.recent + plan.kept.pinned;
  const keptText = kept ? ` It keeps ${plan.kept.recent} in sessions changed in the last hour and ${plan.kept.pinned} pinned.` : '';
  return `Automatic cleanup (${limits}) would delete ${n} blob${n === 1 ? '' : 's'} (${formatBytes(plan.bytes)}) now, and do so at start and daily.${keptText}`;
}
