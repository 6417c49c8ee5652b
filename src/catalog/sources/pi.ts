// pi: session files `<sessions>/--<cwd>--/<timestamp>_<sessionId>.jsonl`;
// pi-condense (and Spillway's pi adapter) blobs in `<sessionId>-blobs/` beside
// them, indexed by `custom` entries (customType `context-prune-index`) or a
// Spillway manifest; bash full outputs `$TMPDIR/pi-bash-*.log` named by
// toolResult `details.fullOutputPath`. Logs in a folder that no session names
// form one fallback session per folder ("unattached pi bash outputs"): they are
// spilled output too (0644 in older pi), and nothing else lists them.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { MANIFEST_NAME } from '../../spill/manifest';
import { refusedKind } from '../../spill/regular-file';
import { compactArgs } from '../../common/one-line';
import { contentChars, forListing, num, obj, own, recordCall, str, type AddedContent, type ApiCall, type DropKind } from '../transcripts/calls';
import type { LineReducer } from '../transcripts/transcripts';
import { remoteReading, type Described, type RootSpec, type SessionClaim, type Source } from './source';
import { describeManifestFolder, notOurs, plainBlob, recordedBlob, symlinkedFolder, wholeFolder } from './common';
import { isPiOutputPath, PI_OUTPUT_FILE } from './pi-output-files';
import { issuedCall, readRecord, readSpillwayRecord, SPILLWAY_INDEX } from './pi-records';
import type { IndexRecord, PiState, ToolCall } from './pi-state';

export type { PiState } from './pi-state';
import { isoTime } from '../../spill/iso-time';

const SESSION_FILE = /_([^_]+)\.jsonl$/;
/** A session's blob folder is `<id>-blobs/` beside its session file. */
const BLOBS_SUFFIX = '-blobs';
/** The shell logs among them, listed even when no session names them; group 1 is the tool. */
const PI_SHELL_LOG = /^pi-(bash|powershell)-[0-9a-f]{8,}\.log$/;
/** The fallback claim's folder key: the logs' folder plus this glob-like name (never a real folder). */
const UNATTACHED_NAME = 'pi-bash-*.log';
export const UNATTACHED_SESSION_ID = 'pi-unattached-outputs';
const QUIET_TYPES = new Set(['model_change', 'thinking_level_change', 'label', 'custom_message', 'branch_summary', 'session_info', 'context_edit', 'custom']);

/** pi-condense names blobs after the call id with [^A-Za-z0-9_-] -> '_', maybe with '@<timestamp>'. */
export function sanitizeCallId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_');
}


export const piReducer: LineReducer<PiState> = {
  kind: 'pi',
  init: () => ({
    toolCalls: new Map(),
    digestChars: new Map(),
    fullOutputs: new Map(),
    index: new Map(),
    resultEntries: new Map(),
    calls: [],
    callById: new Map(),
    pendingCompaction: false,
    pendingAdded: [],
    shortRefs: new Map(),
    spillwayReplaced: new Map(),
    mentions: true,
  }),
  line(state, value) {
    const entry = obj(value);
    if (!entry) return false;
    const type = str(entry.type);
    switch (type) {
      case 'session':
        state.sessionId ??= str(entry.id);
        state.cwd ??= str(entry.cwd);
        return true;
      case 'message':
        return readMessage(state, entry);
      case 'compaction':
        state.pendingCompaction = true;
        state.pendingDrop = 'compaction';
        return true;
      case 'session_info':
        state.title = str(entry.name) ?? str(entry.title) ?? state.title;
        return true;
      case 'custom':
        if (entry.customType === 'context-prune-index') {
          readIndex(state, entry.data);
          state.lastIndex = 'pi-condense';
        } else if (entry.customType === SPILLWAY_INDEX) {
          state.lastIndex = 'spillway';
          readSpillwayRecord(state, entry.data);
        }
        readRecord(state, str(entry.customType), entry.data);
        return true;
      case 'custom_message':
        readRecord(state, str(entry.customType), entry.details);
        return true;
      case 'context_edit': {
        if (state.pendingDrop !== 'compaction') state.pendingDrop = state.lastIndex === 'spillway' ? 'spillway-flush' : 'pi-condense-prune';
        const callId = state.resultEntries.get(str(entry.targetId) ?? '');
        const replacement = obj(entry.replacement);
        if (callId && replacement) state.digestChars.set(callId, contentChars(replacement.content));
        return true;
      }
      default:
        return type !== undefined && QUIET_TYPES.has(type);
    }
  },
};

const piListingReducer = forListing(piReducer);

function readMessage(state: PiState, entry: Record<string, unknown>): boolean {
  const message = obj(entry.message);
  if (!message) return false;
  const timestamp = str(entry.timestamp) ?? (typeof message.timestamp === 'number' ? new Date(message.timestamp).toISOString() : '');
  const entryId = str(entry.id);
  switch (message.role) {
    case 'assistant': {
      if (Array.isArray(message.content)) {
        for (const block of message.content) {
          const b = obj(block);
          if (b?.type === 'toolCall' && typeof b.id === 'string') {
            state.toolCalls.set(b.id, { name: str(b.name) ?? 'unknown', args: compactArgs(b.arguments) || undefined, timestamp, entryId });
          }
        }
      }
      const usage = obj(message.usage);
      // A call that failed (pi keeps it, usage all 0, before it retries) measured nothing: not a point of the series.
      const failed = message.stopReason === 'error';
      if (usage && !failed && num(usage.input) + num(usage.cacheRead) + num(usage.cacheWrite) > 0) {
        const issued = (Array.isArray(message.content) ? message.content : [])
          .map((block) => obj(block))
          .filter((b): b is Record<string, unknown> => b?.type === 'toolCall' && typeof b.id === 'string')
          .map((b) => issuedCall(state, b));
        recordCall(state.calls, state.callById, {
          messageId: entryId,
          timestamp,
          promptTokens: num(usage.input) + num(usage.cacheRead) + num(usage.cacheWrite),
          outputTokens: num(usage.output),
          compactionBefore: state.pendingCompaction,
          added: state.pendingAdded,
          ...(state.pendingDrop ? { dropBefore: state.pendingDrop } : {}),
          ...(state.pendingExplains ? { explains: state.pendingExplains } : {}),
          ...(issued.length ? { toolCalls: issued } : {}),
        });
        state.pendingCompaction = false;
        state.pendingAdded = [];
        state.pendingDrop = undefined;
        state.pendingExplains = undefined;
      }
      return true;
    }
    case 'toolResult': {
      const callId = str(message.toolCallId);
      if (!callId) return true;
      state.digestChars.set(callId, contentChars(message.content));
      const lines = state.spillwayReplaced.get(callId);
      state.pendingAdded.push({
        kind: 'tool-result',
        toolCallId: own(callId),
        chars: contentChars(message.content),
        ...(message.isError === true ? { failed: true } : {}),
        ...(lines !== undefined ? { lines } : {}),
      });
      if (entryId) state.resultEntries.set(entryId, callId);
      const full = str(obj(message.details)?.fullOutputPath);
      if (full) state.fullOutputs.set(full, callId);
      if (!state.toolCalls.has(callId) && str(message.toolName)) {
        state.toolCalls.set(callId, { name: str(message.toolName)!, timestamp });
      }
      return true;
    }
    case 'custom':
      readRecord(state, str(message.customType), message.details);
      return true;
    case 'user': {
      const text = typeof message.content === 'string' ? message.content : Array.isArray(message.content) ? str(obj(message.content[0])?.text) : undefined;
      if (!state.firstPrompt && text) state.firstPrompt = own(text.trim().slice(0, 120));
      state.pendingAdded.push({ kind: 'user', chars: typeof message.content === 'string' ? message.content.length : contentChars(message.content) });
      return true;
    }
    default:
      return typeof message.role === 'string';
  }
}

function readIndex(state: PiState, data: unknown): void {
  const toolCalls = obj(data)?.toolCalls;
  if (!Array.isArray(toolCalls)) return;
  for (const item of toolCalls) {
    const r = obj(item);
    const spillPath = str(r?.spillPath);
    const toolCallId = str(r?.toolCallId);
    if (!r || !spillPath || !toolCallId) continue;
    state.index.set(own(path.basename(spillPath)), { toolCallId, toolName: str(r.toolName), args: r.args });
  }
}

export const pi: Source = {
  name: 'pi',
  defaultRoots: (dirs) => {
    const agentDir = dirs.env.PI_CODING_AGENT_DIR || path.join(dirs.home, '.pi', 'agent');
    const roots: RootSpec[] = [
      { path: path.join(agentDir, 'sessions'), depth: 1 },
      // pi-bash-*.log full outputs live here. A shared folder: only pi's own
      // output files directly in it may ever be deleted.
      { path: dirs.tmp, depth: 0, files: PI_OUTPUT_FILE },
    ];
    if (dirs.env.PI_CODING_AGENT_SESSION_DIR) roots.push({ path: dirs.env.PI_CODING_AGENT_SESSION_DIR, depth: 1 });
    return roots;
  },
  claim(dir) {
    const names = new Set(dir.entries.map((e) => e.name));
    const claims: SessionClaim[] = [];
    if (dir.entries.some((e) => e.isFile() && PI_SHELL_LOG.test(e.name))) {
      claims.push({ source: 'pi', dir: path.join(dir.path, UNATTACHED_NAME), owns: [], fallback: true });
    }
    for (const entry of dir.entries) {
      const id = SESSION_FILE.exec(entry.name)?.[1];
      if (!entry.isFile() || !id) continue;
      // pi session folders are named `--<cwd>--`; elsewhere require the blobs folder.
      const blobsDir = `${id}${BLOBS_SUFFIX}`;
      if (!/^--.*--$/.test(path.basename(dir.path)) && !names.has(blobsDir)) continue;
      claims.push({
        source: 'pi',
        dir: path.join(dir.path, entry.name),
        owns: names.has(blobsDir) ? [path.join(dir.path, blobsDir)] : [],
      });
    }
    // A pi session folder's `<id>-blobs/` whose session file is gone (or is no file): its blobs still fill
    // the disk, so they are listed (and cleanable) as a session of their own, as Claude Code's are.
    if (/^--.*--$/.test(path.basename(dir.path))) {
      const described = new Set(claims.map((c) => SESSION_FILE.exec(path.basename(c.dir))?.[1]));
      for (const entry of dir.entries) {
        const id = entry.isDirectory() && entry.name.endsWith(BLOBS_SUFFIX) ? entry.name.slice(0, -BLOBS_SUFFIX.length) : '';
        if (id && !described.has(id)) claims.push({ source: 'pi', dir: path.join(dir.path, entry.name), owns: [] });
      }
    }
    return claims;
  },
  async describe(claim, ctx) {
    if (claim.fallback) return describeUnattached(path.dirname(claim.dir));
    if (claim.dir.endsWith(BLOBS_SUFFIX)) return describeOrphanBlobs(claim.dir);
    const transcript = claim.dir;
    const read = await ctx.transcripts.read(transcript, ctx.listing ? piListingReducer : piReducer);
    if (!read) return undefined;
    const state = read.state;
    const id = state.sessionId ?? SESSION_FILE.exec(path.basename(transcript))?.[1] ?? path.basename(transcript);
    const blobsDir = path.join(path.dirname(transcript), `${SESSION_FILE.exec(path.basename(transcript))?.[1] ?? id}${BLOBS_SUFFIX}`);
    const folder = await describeManifestFolder(blobsDir);
    let skipped = read.skipped + folder.skipped;
    const turnOf = (callId: string): number | undefined => {
      const entryId = state.toolCalls.get(callId)?.entryId;
      const index = entryId !== undefined ? state.callById.get(entryId) : undefined;
      return index === undefined ? undefined : index + 1;
    };
    // Call ids by their sanitized form (the first call of each), made once: sanitizing every call id again
    // for each blob grew with the square of a session's blobs.
    let bySanitized: Map<string, string> | undefined;
    const callNamed = (sanitized: string): string | undefined => {
      if (!bySanitized) {
        bySanitized = new Map();
        for (const callId of state.toolCalls.keys()) {
          const key = sanitizeCallId(callId);
          if (!bySanitized.has(key)) bySanitized.set(key, callId);
        }
      }
      return bySanitized.get(sanitized);
    };
    const blobs: Described['blobs'] = [];
    for (const blob of folder.blobs) {
      if (blob.attribution === 'none') {
        const indexed = state.index.get(blob.name);
        const sanitized = blob.name.replace(/\.txt$/, '').replace(/@[^@]*$/, '');
        const callId = indexed?.toolCallId ?? callNamed(sanitized);
        if (callId) {
          const call = state.toolCalls.get(callId);
          Object.assign(blob, {
            toolCallId: callId,
            tool: indexed?.toolName ?? call?.name,
            args: indexed?.args !== undefined ? (compactArgs(indexed.args) || undefined) : call?.args,
            attribution: indexed ? 'index' : 'transcript',
            createdAt: call?.timestamp || blob.createdAt,
          });
        }
      }
      if (blob.toolCallId) {
        blob.turn ??= turnOf(blob.toolCallId);
        blob.digestChars = state.digestChars.get(blob.toolCallId);
      }
      blobs.push(blob);
    }
    for (const [fullPath, callId] of state.fullOutputs) {
      // Only pi's own output file, in a folder the catalog knows (TMPDIR), reached
      // without a symlink: anything else named here is never listed, so never printed or cleaned.
      const refused = isPiOutputPath(fullPath) ? await ctx.refusal(fullPath) : 'not a pi output file';
      const stat = refused ? undefined : await fsp.lstat(fullPath).catch(() => undefined);
      if (!stat || notOurs(stat)) {
        if (stat || (refused && refused !== 'no such file')) skipped++; // a missing file was deleted by the OS or by a clean: normal
        continue;
      }
      const call = state.toolCalls.get(callId);
      // pi wrote the log; when Spillway replaced the tail pi showed with its digest, what the model was sent is Spillway's doing.
      const replaced = state.spillwayReplaced.has(callId);
      blobs.push({
        path: fullPath,
        name: path.basename(fullPath),
        kind: 'shell-output',
        tool: call?.name ?? 'bash',
        toolCallId: callId,
        args: call?.args,
        bytes: stat.size,
        createdAt: call?.timestamp || isoTime(stat.mtimeMs),
        mtimeMs: stat.mtimeMs,
        turn: turnOf(callId),
        attribution: 'transcript',
        digestChars: state.digestChars.get(callId),
        ...(replaced ? { madeBy: 'spillway' as const } : {}),
      });
    }
    if (blobs.length === 0) {
      const refused = symlinkedFolder(blobsDir, folder.listed);
      if (refused) throw refused;
      return undefined;
    }
    return {
      session: {
        source: 'pi',
        id,
        title: state.title ?? state.firstPrompt,
        cwd: state.cwd,
        dir: folder.blobs.length > 0 ? blobsDir : path.dirname(transcript),
        transcript,
        skipped,
        notes: [],
      },
      blobs,
      dependsOn: [transcript, path.join(blobsDir, MANIFEST_NAME), ...[...state.fullOutputs.keys()].filter(isPiOutputPath)],
      calls: state.calls,
      // The bash logs in TMPDIR stay file by file: that folder holds anything.
      blobFolders: wholeFolder(blobsDir, folder.listed, folder.blobs.length),
    };
  },
  // In a bucket the blobs are Spillway's, each with its record; the session file's copy ties them to their turns.
  remote: remoteReading<PiState>({
    reducer: piReducer,
    session: (state) => ({ id: state.sessionId, title: state.title ?? state.firstPrompt, cwd: state.cwd, calls: state.calls }),
    blob: (file, stat, record, state) => {
      // What the record says, then what the session file adds: the call's turn, what the model saw of it.
      const blob = recordedBlob(file, stat, record);
      const call = blob.toolCallId ? state?.toolCalls.get(blob.toolCallId) : undefined;
      const index = call?.entryId !== undefined ? state?.callById.get(call.entryId) : undefined;
      return {
        ...blob,
        ...(!blob.tool && call ? { tool: call.name } : {}),
        ...(!blob.args && call?.args ? { args: call.args } : {}),
        ...(!record?.createdAt && call?.timestamp ? { createdAt: call.timestamp } : {}),
        ...(blob.turn === undefined && index !== undefined ? { turn: index + 1 } : {}),
        ...(blob.toolCallId && state?.digestChars.has(blob.toolCallId) ? { digestChars: state.digestChars.get(blob.toolCallId) } : {}),
      };
    },
  }),
};

/** A `<id>-blobs/` folder whose session file is gone: its blobs, by its manifest where it has one. */
async function describeOrphanBlobs(blobsDir: string): Promise<Described | undefined> {
  const folder = await describeManifestFolder(blobsDir);
  if (folder.blobs.length === 0) return undefined;
  return {
    session: {
      source: 'pi',
      id: folder.sessionId ?? path.basename(blobsDir).slice(0, -BLOBS_SUFFIX.length),
      dir: blobsDir,
      skipped: folder.skipped,
      notes: ['session file missing'],
    },
    blobs: folder.blobs,
    dependsOn: [path.join(blobsDir, MANIFEST_NAME)],
    blobFolders: wholeFolder(blobsDir, folder.listed, folder.blobs.length),
  };
}

/**
 * pi shell logs in `dir` (TMPDIR) as one session; the catalog gives each log
 * that a pi session names to that session instead.
 */
async function describeUnattached(dir: string): Promise<Described | undefined> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  const blobs: Described['blobs'] = [];
  let skipped = 0;
  for (const name of names) {
    const tool = PI_SHELL_LOG.exec(name)?.[1];
    if (!tool) continue;
    const file = path.join(dir, name);
    const stat = await fsp.lstat(file).catch(() => undefined);
    if (!stat) continue; // vanished meanwhile
    if (refusedKind(stat) || notOurs(stat)) {
      skipped++; // a symlink, folder or hard link with a log's name, or another user's file: never listed
      continue;
    }
    blobs.push(plainBlob({ path: file, name, symlink: false, stat: { size: stat.size, mtimeMs: stat.mtimeMs } }, { kind: 'shell-output', tool }));
  }
  if (blobs.length === 0) return undefined;
  return {
    session: {
      source: 'pi',
      id: UNATTACHED_SESSION_ID,
      title: 'unattached pi bash outputs',
      dir,
      skipped,
      notes: [`pi shell logs in ${dir} that no pi session names`],
    },
    blobs,
    dependsOn: blobs.map((b) => b.path),
  };
}
