// Claude Code: `<config>/projects/<enc>/<sessionId>/tool-results/` beside the
// transcript `<enc>/<sessionId>.jsonl`, subagent transcripts under
// `<sessionId>/subagents/`, and Spillway folders (with a manifest) the hook
// adapter puts beside `tool-results/`.
import * as path from 'node:path';
import { isInternalName } from '../../spill/internal-names';
import { MANIFEST_NAME, type ManifestRecord } from '../../spill/manifest';
import { compactArgs } from '../../common/one-line';
import { contentChars, contentText, forListing, mentionsIn, num, obj, own, recordCall, str, type AddedContent, type ApiCall, type DropKind, type IssuedToolCall, type MentionsState } from '../transcripts/calls';
import { SlimReader, typeFromEnd } from '../transcripts/slim-line';
import type { LineReducer } from '../transcripts/transcripts';
import type { Attribution, BlobKind } from '../types';
import { remoteReading, type Described, type DescribeContext, type DirListing, type SessionClaim, type Source } from './source';
import { folderManifest, listFiles, manifestIndex, symlinkedFolder, wholeFolder, type FileFacts, type FileStat } from './common';
import { isoTime } from '../../spill/iso-time';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SHELL_FILE = /^b[0-9a-z]{8,10}\.txt$/;
const SAVED_TO = /Full output saved to: (\S+)/g;
/** The last line of a digest Spillway's shell prefix put in a Bash result: it names the blob, which is named after the shell task. */
const CAPTURED_IN = /its complete output \(stdout and stderr\) is in (.+?)\]$/gm;
/** Line types Claude Code writes that carry nothing the catalog needs. */
const QUIET_TYPES = new Set([
  'attachment', 'progress', 'file-history-snapshot', 'queue-operation', 'last-prompt', 'tag', 'atis-latch',
  'api-request-shape', 'api-request', 'api-request-blob', 'tools-used', 'cost-state',
]);

interface ToolUse {
  name: string;
  /** Compact args, computed while parsing so the raw input is not kept. */
  args?: string;
  timestamp: string;
  messageId?: string;
  sidechain: boolean;
}

export interface ClaudeState extends MentionsState {
  sessionId?: string;
  cwd?: string;
  title?: string;
  firstPrompt?: string;
  toolUses: Map<string, ToolUse>;
  /** tool_use_id -> chars the model saw as the result. */
  digestChars: Map<string, number>;
  /** Spill file name -> tool_use_id (persistedOutputPath, "Full output saved to:"). */
  fileToToolUse: Map<string, string>;
  calls: ApiCall[];
  callById: Map<string, number>;
  pendingCompaction: boolean;
  compactions: number;
  /** Tool results and prompts since the last call (the next call's growth). */
  pendingAdded: AddedContent[];
  /** A boundary since the last call that clears part of the context without a compaction (a micro-compaction). */
  pendingExplains?: DropKind;
}

/**
 * How a quiet line starts when `type` is its first key, as Claude Code writes
 * its bookkeeping lines (`{"type":"api-request-shape",...}`, often tens of KB).
 */
const QUIET_STARTS = [...QUIET_TYPES].map((type) => Buffer.from(`{"type":${JSON.stringify(type)},`));

/** A quiet line's `type` as written (typeFromEnd). */
const QUIET_VALUES = new Set([...QUIET_TYPES].map((type) => JSON.stringify(type)));

/** Whether `bytes[start, end)` begins with `prefix`, compared here byte by byte (most lines differ within ten). */
function startsWith(bytes: Buffer, start: number, end: number, prefix: Buffer): boolean {
  if (end - start < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[start + i] !== prefix[i]) return false;
  return true;
}

export const claudeReducer: LineReducer<ClaudeState> = {
  kind: 'claude-code',
  init: () => ({
    toolUses: new Map(),
    digestChars: new Map(),
    fileToToolUse: new Map(),
    calls: [],
    callById: new Map(),
    pendingCompaction: false,
    compactions: 0,
    pendingAdded: [],
    mentions: true,
  }),
  // A tool's output again, of which readUser reads only where it was persisted.
  slim: new SlimReader({ type: 'user', field: 'toolUseResult', keep: ['persistedOutputPath'] }),
  // A quiet line changes the state only by giving the session id or cwd when none is known yet. Its type is found at
  // its start (`{"type":"api-request-shape",…`) or, as Claude Code writes attachments, after its one large value.
  passOver(state, bytes, start, end) {
    if (state.sessionId === undefined || state.cwd === undefined || bytes[end - 1] !== 0x7d) return false;
    if (QUIET_STARTS.some((quiet) => startsWith(bytes, start, end, quiet))) return true;
    const type = typeFromEnd(bytes, start, end);
    return type !== undefined && QUIET_VALUES.has(type);
  },
  line(state, value) {
    const line = obj(value);
    if (!line) return false;
    const type = str(line.type);
    state.sessionId ??= str(line.sessionId);
    state.cwd ??= str(line.cwd);
    const sidechain = line.isSidechain === true;
    switch (type) {
      case 'assistant':
        return readAssistant(state, line, sidechain);
      case 'user':
        return readUser(state, line, sidechain);
      case 'system':
        if (line.subtype === 'compact_boundary' && !sidechain) {
          state.pendingCompaction = true;
          state.compactions++;
        } else if (typeof line.subtype === 'string' && line.subtype.endsWith('compact_boundary') && !sidechain) state.pendingExplains = 'compaction';
        return true;
      case 'summary':
      case 'custom-title':
      case 'ai-title': {
        const title = str(line.customTitle) ?? str(line.title) ?? str(line.aiTitle) ?? str(line.summary);
        // A user-set title wins over generated ones.
        if (title && (type === 'custom-title' || !state.title)) state.title = title;
        return true;
      }
      case 'content-replacement':
        readReplacement(state, line);
        return true;
      default:
        return type !== undefined && QUIET_TYPES.has(type);
    }
  },
};

const claudeListingReducer = forListing(claudeReducer);

function readAssistant(state: ClaudeState, line: Record<string, unknown>, sidechain: boolean): boolean {
  const message = obj(line.message);
  if (!message) return false;
  const timestamp = str(line.timestamp) ?? '';
  const messageId = str(message.id);
  const issued: IssuedToolCall[] = [];
  if (Array.isArray(message.content)) {
    for (const block of message.content) {
      const b = obj(block);
      if (b?.type === 'tool_use' && typeof b.id === 'string') {
        const name = str(b.name) ?? 'unknown';
        state.toolUses.set(b.id, { name, args: compactArgs(b.input) || undefined, timestamp, messageId, sidechain });
        issued.push({ id: own(b.id), name: own(name), mentions: mentionsIn(state, b.input) });
      }
    }
  }
  const usage = obj(message.usage);
  const promptTokens = usage ? num(usage.input_tokens) + num(usage.cache_creation_input_tokens) + num(usage.cache_read_input_tokens) : 0;
  // A message with no prompt counted (a synthetic one, usage fields null) measured no call: no point of the series.
  if (!sidechain && usage && message.model !== '<synthetic>' && promptTokens > 0) {
    const fresh = messageId === undefined || !state.callById.has(messageId);
    const index = recordCall(state.calls, state.callById, {
      messageId,
      timestamp,
      promptTokens,
      outputTokens: num(usage.output_tokens),
      compactionBefore: fresh && state.pendingCompaction,
      ...(fresh ? { added: state.pendingAdded, ...(state.pendingCompaction ? { dropBefore: 'compaction' as const } : {}) } : {}),
      ...(fresh && state.pendingExplains ? { explains: state.pendingExplains } : {}),
    });
    if (fresh) {
      state.pendingCompaction = false;
      state.pendingAdded = [];
      state.pendingExplains = undefined;
    }
    // One API call's content blocks come as several lines with the same message id.
    if (issued.length) (state.calls[index]!.toolCalls ??= []).push(...issued);
  }
  return true;
}

function readUser(state: ClaudeState, line: Record<string, unknown>, sidechain: boolean): boolean {
  const message = obj(line.message);
  if (!message) return false;
  if (typeof message.content === 'string') {
    const text = message.content.trim();
    if (!sidechain && !state.firstPrompt && text && !text.startsWith('<')) state.firstPrompt = own(text.slice(0, 120));
    if (!sidechain) state.pendingAdded.push({ kind: 'user', chars: message.content.length });
    return true;
  }
  if (!Array.isArray(message.content)) return true;
  let firstToolUseId: string | undefined;
  for (const block of message.content) {
    const b = obj(block);
    if (!sidechain && b?.type === 'text' && typeof b.text === 'string') state.pendingAdded.push({ kind: 'user', chars: b.text.length });
    if (b?.type !== 'tool_result' || typeof b.tool_use_id !== 'string') continue;
    firstToolUseId ??= b.tool_use_id;
    state.digestChars.set(b.tool_use_id, contentChars(b.content));
    if (!sidechain) state.pendingAdded.push({ kind: 'tool-result', toolCallId: own(b.tool_use_id), chars: contentChars(b.content), ...(b.is_error === true ? { failed: true } : {}) });
    const text = contentText(b.content);
    for (const match of [...text.matchAll(SAVED_TO), ...text.matchAll(CAPTURED_IN)]) {
      state.fileToToolUse.set(own(path.basename(match[1]!)), b.tool_use_id);
    }
  }
  const persisted = str(obj(line.toolUseResult)?.persistedOutputPath);
  if (persisted && firstToolUseId) state.fileToToolUse.set(own(path.basename(persisted)), firstToolUseId);
  return true;
}

/** Request-time spills: what the model saw for each replaced result. Field names vary, so look for the pairs. */
function readReplacement(state: ClaudeState, line: Record<string, unknown>): void {
  const visit = (value: unknown, depth: number): void => {
    if (depth > 4) return;
    if (Array.isArray(value)) return value.forEach((v) => visit(v, depth + 1));
    const o = obj(value);
    if (!o) return;
    const id = str(o.toolUseId) ?? str(o.tool_use_id) ?? str(o.toolUseID);
    const replacement = o.replacement ?? o.content ?? o.text;
    if (id && replacement !== undefined) {
      state.digestChars.set(id, typeof replacement === 'string' ? replacement.length : contentChars(replacement));
      for (const match of contentText(replacement).matchAll(SAVED_TO)) state.fileToToolUse.set(own(path.basename(match[1]!)), id);
    }
    for (const v of Object.values(o)) if (typeof v === 'object') visit(v, depth + 1);
  };
  visit(line, 0);
}

/**
 * One file of a session's blob folders as a blob: attributed by the transcripts' tool calls (the file
 * names one, or its name is the call's id), else by its Spillway manifest record, else by its name.
 */
function describeBlob(file: FileFacts, stat: FileStat, inToolResults: boolean, states: readonly ClaudeState[], record: ManifestRecord | undefined): Described['blobs'][number] {
  const kind = inToolResults ? classify(file.name) : 'tool-result';
  let toolUseId: string | undefined;
  for (const state of states) {
    toolUseId ??= state.fileToToolUse.get(file.name);
  }
  if (!toolUseId && inToolResults && (kind === 'tool-result' || kind === 'tool-result-json')) {
    toolUseId = unescapeName(file.name.replace(/\.(txt|json)$/, ''));
  }
  const use = toolUseId ? states.map((s) => s.toolUses.get(toolUseId!)).find(Boolean) : undefined;
  let attribution: Attribution = 'none';
  let tool: string | undefined;
  let args: string | undefined;
  // The file's mtime only when no call or record gives the time: a Date for every blob is a cost of every scan.
  let createdAt: string | undefined;
  let turn: number | undefined;
  let digestChars: number | undefined;
  if (use) {
    attribution = 'transcript';
    tool = use.name;
    args = use.args;
    if (use.timestamp) createdAt = use.timestamp;
    const owner = states.find((s) => s.toolUses.get(toolUseId!) === use)!;
    if (!use.sidechain && use.messageId !== undefined) {
      const index = owner.callById.get(use.messageId);
      if (index !== undefined) turn = index + 1;
    }
    digestChars = owner.digestChars.get(toolUseId!);
  } else if (record) {
    attribution = 'manifest';
    tool = record.tool;
    toolUseId = record.toolCallId || toolUseId;
    args = compactArgs(record.args) || undefined;
    if (record.createdAt) createdAt = record.createdAt;
    turn = record.turn;
    const recordUse = record.toolCallId ? states.map((s) => s.toolUses.get(record.toolCallId)).find(Boolean) : undefined;
    if (recordUse && !recordUse.sidechain && recordUse.messageId !== undefined) {
      const owner = states.find((s) => s.toolUses.get(record.toolCallId) === recordUse)!;
      const index = owner.callById.get(recordUse.messageId);
      if (index !== undefined) turn = index + 1;
      digestChars = owner.digestChars.get(record.toolCallId);
    }
  } else if (kind === 'hook') {
    attribution = 'name';
    tool = 'hook';
  } else if (kind === 'mcp') {
    attribution = 'name';
    tool = file.name.replace(/-\d{10,}.*$/, '').replace(/^mcp-/, 'mcp:');
  }
  return {
    path: file.path,
    name: file.name,
    kind,
    tool,
    toolCallId: toolUseId,
    args,
    bytes: stat.size,
    createdAt: createdAt || isoTime(stat.mtimeMs),
    mtimeMs: stat.mtimeMs,
    turn,
    attribution,
    digestChars,
    ...(record ? { madeBy: 'spillway' as const } : {}),
  };
}

/** `<tool_use_id>.txt` names have chars outside [A-Za-z0-9_.-] %-escaped. */
function unescapeName(stem: string): string {
  try {
    return decodeURIComponent(stem);
  } catch {
    return stem;
  }
}

function classify(name: string): BlobKind {
  if (SHELL_FILE.test(name)) return 'shell-output';
  if (name.startsWith('mcp-')) return 'mcp';
  if (name.startsWith('hook-')) return 'hook';
  if (name.endsWith('.json')) return 'tool-result-json';
  if (name.endsWith('.txt')) return 'tool-result';
  return 'other';
}

export const claudeCode: Source = {
  name: 'claude-code',
  defaultRoots: (dirs) => [
    { path: path.join(dirs.env.CLAUDE_CONFIG_DIR || path.join(dirs.home, '.claude'), 'projects'), depth: 3 },
  ],
  claim(dir: DirListing): SessionClaim[] {
    if (!UUID.test(path.basename(dir.path))) return [];
    // A tool-results/ that is a symlink is claimed too: describing it then says why none of its files are listed.
    const subdirs = dir.entries.filter((e) => e.isDirectory() || (e.name === 'tool-results' && e.isSymbolicLink()));
    if (!subdirs.some((e) => e.name === 'tool-results' || e.name !== 'subagents')) return [];
    return [{ source: 'claude-code', dir: dir.path, owns: subdirs.map((e) => path.join(dir.path, e.name)) }];
  },
  async describe(claim: SessionClaim, ctx: DescribeContext): Promise<Described | undefined> {
    const dir = claim.dir;
    const transcript = path.join(path.dirname(dir), path.basename(dir) + '.jsonl');
    const dependsOn = [transcript];
    let skipped = 0;
    const notes: string[] = [];

    const reducer = ctx.listing ? claudeListingReducer : claudeReducer;
    const main = await ctx.transcripts.read(transcript, reducer);
    if (!main) notes.push('transcript missing');
    skipped += main?.skipped ?? 0;
    const states = main ? [main.state] : [];
    // Listed only when the walk found it (the claim's sub-folders; a new one changes the claim): no probe for
    // the folder most sessions lack.
    const subagentDir = path.join(dir, 'subagents');
    for (const file of claim.owns.includes(subagentDir) ? await listFiles(subagentDir) : []) {
      if (!file.name.endsWith('.jsonl') || file.symlink) continue;
      dependsOn.push(file.path);
      const sub = await ctx.transcripts.read(file.path, reducer);
      if (sub) {
        states.push(sub.state);
        skipped += sub.skipped;
      }
    }

    // Blob folders: tool-results/ and any sibling folder holding a Spillway manifest.
    // The claim lists the session folder's sub-folders as the walk found them (a new one changes the claim).
    const folders = [path.join(dir, 'tool-results')]; // first: the loop below knows it by its place
    for (const owned of claim.owns) {
      const name = path.basename(owned);
      if (name !== 'tool-results' && name !== 'subagents') folders.push(owned);
    }
    const records = new Map<string, ManifestRecord>();
    /** Each folder whose files are blobs, as listed, with how many of them became blobs. */
    const listings: Array<{ folder: string; toolResults: boolean; listed: FileFacts[]; blobs: number }> = [];
    for (const [i, folder] of folders.entries()) {
      const toolResults = i === 0;
      // tool-results/ is listed in any case, and its listing says whether a manifest is there.
      const listed = toolResults ? await listFiles(folder) : undefined;
      const manifest = await folderManifest(folder, listed);
      skipped += manifest.skipped;
      if (manifest.records.length > 0) dependsOn.push(path.join(folder, MANIFEST_NAME));
      manifestIndex(folder, manifest.records, records);
      // Other folders count only when a manifest makes them Spillway's (and are listed only then).
      if (!toolResults && manifest.records.length === 0) continue;
      listings.push({ folder, toolResults, listed: listed ?? (await listFiles(folder)), blobs: 0 });
    }

    const blobs: Described['blobs'] = [];
    for (const listing of listings) {
      for (const file of listing.listed) {
        if (isInternalName(file.name)) continue;
        if (file.symlink || !file.stat) {
          skipped++;
          continue;
        }
        listing.blobs++;
        blobs.push(describeBlob(file, file.stat, listing.toolResults, states, records.get(file.path)));
      }
    }
    if (blobs.length === 0) {
      const refused = symlinkedFolder(folders[0]!, listings[0]?.listed);
      if (refused) throw refused;
      return undefined;
    }
    const state = main?.state;
    return {
      session: {
        source: 'claude-code',
        id: state?.sessionId ?? path.basename(dir),
        title: state?.title ?? state?.firstPrompt,
        cwd: state?.cwd,
        dir,
        transcript: main ? transcript : undefined,
        skipped,
        notes,
      },
      blobs,
      dependsOn,
      calls: state?.calls ?? [],
      blobFolders: listings.flatMap(({ folder, listed, blobs: fromIt }) => wholeFolder(folder, listed, fromIt) ?? []),
    };
  },
  // In a bucket the blobs are Spillway's (each with its record), none in tool-results/.
  remote: remoteReading<ClaudeState>({
    reducer: claudeReducer,
    session: (state) => ({ id: state.sessionId, title: state.title ?? state.firstPrompt, cwd: state.cwd, calls: state.calls }),
    blob: (file, stat, record, state) => describeBlob({ ...file, symlink: false, stat }, stat, false, state ? [state] : [], record),
  }),
};
