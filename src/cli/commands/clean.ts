// `spillway clean`: delete a session's blobs or by retention; lists only unless --yes.
import { UsageError, type CliCommand } from '../io';
import { formatBytes, human, json, newCatalog, parseDuration, parseFlags, parseSize, reportProblems, ROOT_FLAGS, sessionNamed, tableLines, writeInPieces } from '../format';
import { cleanupPolicyPath, planPolicyClean, readCleanupPolicy } from '../../catalog/clean/cleanupPolicy';
import { mayName } from '../../catalog/catalog';
import type { CleanableSession, CleanPlan, SessionInfo } from '../../catalog/types';
import { isoTime } from '../../spill/iso-time';

export const CLEAN_USAGE =
  'usage: spillway clean (--session ID | --older-than 7d | --max-total 5GB | --policy) [--dry-run] [--yes] [--json] [--root DIR]... [--no-default-roots]\n' +
  `  --policy  apply the automatic cleanup policy (${'$'}XDG_CONFIG_HOME/spillway/cleanup.json, written by the VS Code settings): for cron`;

export const cleanCommand: CliCommand = async (argv, io) => {
  const { values, positionals } = parseFlags(argv, {
    ...ROOT_FLAGS,
    session: { type: 'string' },
    'older-than': { type: 'string' },
    'max-total': { type: 'string' },
    policy: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    yes: { type: 'boolean', short: 'y' },
  });
  if (values.help) {
    io.stdout(CLEAN_USAGE + '\n');
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'\n${CLEAN_USAGE}`);
  const retention = values['older-than'] !== undefined || values['max-total'] !== undefined;
  const chosen = [values.session !== undefined, retention, values.policy === true].filter(Boolean).length;
  if (chosen > 1) throw new UsageError(`choose one of --session, --older-than/--max-total, --policy\n${CLEAN_USAGE}`);
  if (chosen === 0) throw new UsageError(`say what to clean\n${CLEAN_USAGE}`);
  const olderThanMs = values['older-than'] !== undefined ? parseDuration(values['older-than']) : undefined;
  const maxTotalBytes = values['max-total'] !== undefined ? parseSize(values['max-total']) : undefined;

  // The streaming scan `list` uses: only what a plan needs of each blob is kept, and the session a name may mean.
  const catalog = newCatalog(values, io);
  const listing = await catalog.scanSessions();
  reportProblems(catalog, io);
  const sessions: CleanableSession[] = [];
  const named: SessionInfo[] = [];
  try {
    await listing.forEach((s) => {
      sessions.push({ key: s.key, updatedAt: s.updatedAt, transcript: s.transcript, blobs: s.blobs.map(({ path, bytes, mtimeMs, sessionKey }) => ({ path, bytes, mtimeMs, sessionKey })) });
      if (values.session !== undefined && mayName(values.session, s)) named.push(s);
    });
  } finally {
    await listing.close();
  }
  let plan: CleanPlan;
  if (values.policy) {
    const policy = await readCleanupPolicy(io.env);
    if (!policy) {
      io.stderr(human`spillway clean: no cleanup policy at ${cleanupPolicyPath(io.env)} (set spillway.cleanup.* in VS Code, or write {"maxAgeDays": 30, "maxTotalBytes": 5368709120, "pinned": []} there)\n`);
      return 1;
    }
    const p = await planPolicyClean(catalog, policy, Date.now(), sessions);
    if (p.kept.recent || p.kept.pinned) io.stderr(`spillway clean: kept ${p.kept.recent} blob(s) of sessions changed in the last hour, ${p.kept.pinned} pinned\n`);
    plan = p;
  } else if (values.session !== undefined) {
    const found = sessionNamed('clean', values.session, named, io);
    if (!found) return 1;
    plan = await catalog.planClean({ kind: 'session', sessionKey: found.key }, sessions);
  } else {
    plan = await catalog.planClean({ kind: 'retention', olderThanMs, maxTotalBytes }, sessions);
  }
  const execute = values.yes === true && values['dry-run'] !== true;
  const result = execute ? await catalog.executeClean(plan) : undefined;
  if (values.json) {
    json(io, {
      dryRun: !execute,
      items: plan.items.map((i) => ({ path: i.path, bytes: i.bytes, session: i.sessionKey, mtime: isoTime(i.mtimeMs) })),
      bytes: plan.bytes,
      refused: plan.refused,
      ...(result ? { deleted: result.deleted.map((d) => d.path), deletedBytes: result.bytes, failed: result.failed, manifestsRewritten: result.manifestsRewritten } : {}),
    });
  } else {
    await writeInPieces(io, tableLines(plan.items.map((i) => [formatBytes(i.bytes), isoTime(i.mtimeMs), i.path])));
    for (const r of plan.refused) io.stderr(human`spillway clean: refused ${r.path}: ${r.reason}\n`);
    if (result) {
      for (const f of result.failed) io.stderr(human`spillway clean: failed ${f.path}: ${f.reason}\n`);
      io.stdout(`Deleted ${result.deleted.length} file(s), ${formatBytes(result.bytes)}.\n`);
    } else {
      io.stdout(`Would delete ${plan.items.length} file(s), ${formatBytes(plan.bytes)}.${plan.items.length ? ' Run again with --yes to delete.' : ''}\n`);
    }
  }
  return result && result.failed.length > 0 ? 1 : 0;
};
