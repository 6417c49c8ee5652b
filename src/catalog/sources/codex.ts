// Codex CLI: what Spillway's Codex hook captured, `$CODEX_HOME/spillway/<session
// id>/bash-<call id>.txt` with its manifest (Codex itself keeps no output on
// disk). The session's own transcript, `$CODEX_HOME/sessions/YYYY/MM/DD/
// rollout-<time>-<session id>.jsonl`, gives each blob its turn and the
// session its API calls (one `token_count` event each).
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { forListing, mentionsIn, num, obj, str, type AddedContent, type ApiCall, type IssuedToolCall, type MentionsState } from '../transcripts/calls';
import { remoteReading, type Described, type Source } from './source';
import type { LineReducer } from '../transcripts/transcripts';
import { describeManifestFolder, recordedBlob, wholeFolder } from './common';

/** The folder under `$CODEX_HOME` the Codex hook moves captures to (src/adapters/codex-final-path.ts). */
const SPILL_FOLDER = 'spillway';
/** Codex's session ids are UUIDs. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function codexHomeFrom(env: NodeJS.ProcessEnv, home: string): string {
  const set = env.CODEX_HOME?.trim();
  return set && path.isAbsolute(set) ? set : path.join(home || os.homedir(), '.codex');
}

interface CodexState extends MentionsState {
  cwd?: string;
  title?: string;
  calls: ApiCall[];
  /** Each tool call's issuing API call (0-based) and what it asked. */
  toolCalls: Map<string, { call: number; name: string; args: unknown }>;
  /** Tool calls issued since the last token count (the call that count is for issued them). */
  pendingIssued: IssuedToolCall[];
  /** Outputs that entered the conversation, by the index of the API call they were first sent in. */
  addedFor: Map<number, AddedContent[]>;
}

const codexReducer: LineReducer<CodexState> = {
  kind: 'codex',
  init: () => ({ calls: [], toolCalls: new Map(), pendingIssued: [], addedFor: new Map(), mentions: true }),
  line(state, value) {
    const line = obj(value);
    const payload = obj(line?.payload);
    if (!line || !payload) return false;
    const timestamp = str(line.timestamp) ?? '';
    switch (line.type) {
      case 'session_meta':
        state.cwd ??= str(payload.cwd);
        return true;
      case 'response_item':
        readItem(state, payload);
        return true;
      case 'event_msg': {
        if (payload.type === 'user_message') state.title ??= str(payload.message)?.split('\n')[0]?.slice(0, 120);
        if (payload.type !== 'token_count') return true;
        const last = obj(obj(payload.info)?.last_token_usage);
        if (!last) return true;
        const index = state.calls.length;
        state.calls.push({
          timestamp,
          promptTokens: num(last.input_tokens),
          outputTokens: num(last.output_tokens),
          compactionBefore: false,
          added: state.addedFor.get(index) ?? [],
          toolCalls: state.pendingIssued,
        });
        state.pendingIssued = [];
        return true;
      }
      default:
        return true;
    }
  },
};

function readItem(state: CodexState, item: Record<string, unknown>): void {
  const callId = str(item.call_id);
  if (!callId) return;
  if (item.type === 'function_call' || item.type === 'custom_tool_call') {
    const raw = str(item.arguments) ?? str(item.input) ?? '';
    let args: unknown = raw;
    try {
      args = JSON.parse(raw);
    } catch {
      // a custom tool's input is plain text
    }
    const name = str(item.name) ?? 'tool';
    // Issued by the API call whose token count comes next.
    state.toolCalls.set(callId, { call: state.calls.length, name, args });
    state.pendingIssued.push({ id: callId, name, mentions: mentionsIn(state, args) });
  } else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
    const issuer = state.toolCalls.get(callId);
    const sentIn = (issuer?.call ?? state.calls.length) + 1;
    const output = item.output;
    const chars = typeof output === 'string' ? output.length : JSON.stringify(output ?? '').length;
    const list = state.addedFor.get(sentIn) ?? [];
    list.push({ kind: 'tool-result', toolCallId: callId, chars });
    state.addedFor.set(sentIn, list);
  }
}

const codexListingReducer = forListing(codexReducer);

/** `sessions/YYYY/MM/DD/rollout-*-<id>.jsonl`, newest days first; undefined when none is found. */
async function findRollout(codexHome: string, sessionId: string): Promise<string | undefined> {
  const sessions = path.join(codexHome, 'sessions');
  const names = async (dir: string): Promise<string[]> => (await fsp.readdir(dir).catch(() => [] as string[])).sort().reverse();
  const suffix = `-${sessionId}.jsonl`;
  for (const year of await names(sessions)) {
    for (const month of await names(path.join(sessions, year))) {
      for (const day of await names(path.join(sessions, year, month))) {
        const dir = path.join(sessions, year, month, day);
        const hit = (await names(dir)).find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
        if (hit) return path.join(dir, hit);
      }
    }
  }
  return undefined;
}

export const codex: Source = {
  name: 'codex',
  defaultRoots: (dirs) => [{ path: path.join(codexHomeFrom(dirs.env, dirs.home), SPILL_FOLDER), depth: 1 }],
  claim(dir) {
    if (path.basename(path.dirname(dir.path)) !== SPILL_FOLDER || !SESSION_ID.test(path.basename(dir.path))) return [];
    return [{ source: 'codex', dir: dir.path, owns: [] }];
  },
  async describe(claim, ctx) {
    const folder = await describeManifestFolder(claim.dir);
    if (folder.blobs.length === 0) return undefined;
    const id = path.basename(claim.dir);
    const transcript = await findRollout(path.dirname(path.dirname(claim.dir)), id);
    const read = transcript ? await ctx.transcripts.read(transcript, ctx.listing ? codexListingReducer : codexReducer) : undefined;
    const state = read?.state;
    for (const blob of folder.blobs) attribute(blob, state);
    const described: Described = {
      session: {
        source: 'codex',
        id,
        ...(state?.title ? { title: state.title } : {}),
        ...(state?.cwd ? { cwd: state.cwd } : {}),
        ...(transcript && read ? { transcript } : {}),
        dir: claim.dir,
        skipped: folder.skipped + (read?.skipped ?? 0),
        notes: transcript ? [] : ['Codex transcript (rollout file) not found'],
      },
      blobs: folder.blobs,
      dependsOn: [folder.manifest, ...(transcript ? [transcript] : [])],
      blobFolders: wholeFolder(claim.dir, folder.listed, folder.blobs.length),
      ...(state ? { calls: state.calls } : {}),
    };
    return described;
  },
  // In a bucket the blobs are the hook's, each with its record; the rollout's copy gives their turns and the session's calls.
  remote: remoteReading<CodexState>({
    reducer: codexReducer,
    session: (state) => ({ ...(state.title ? { title: state.title } : {}), ...(state.cwd ? { cwd: state.cwd } : {}), calls: state.calls }),
    blob: (file, stat, record, state) => attribute(recordedBlob(file, stat, record), state),
  }),
};

/** A captured shell output, at the turn of the API call that issued its tool call. */
function attribute(blob: Described['blobs'][number], state: CodexState | undefined): Described['blobs'][number] {
  blob.kind = blob.tool === 'Bash' ? 'shell-output' : 'tool-result';
  const call = blob.toolCallId ? state?.toolCalls.get(blob.toolCallId) : undefined;
  if (call) blob.turn ??= call.call + 1;
  return blob;
}
