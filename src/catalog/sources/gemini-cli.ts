// Gemini CLI: `~/.gemini/tmp/<project>/tool-outputs/session-<id>/<tool>_<callId>.txt`,
// or `<callId>.txt` when the call id starts with the tool's name (both lowercased);
// Spillway's hook writes its blobs there too, named in the manifest. The
// session file in `<project>/chats/` gives the calls (turns) and ties each of
// Spillway's blobs to the shell call whose result named it.
import * as path from 'node:path';
import { remoteReading, type Described, type Source } from './source';
import { MANIFEST_NAME } from '../../spill/manifest';
import { describeManifestFolder, recordedBlob, wholeFolder } from './common';
import { blobCallNamed, findGeminiTranscript, geminiListingReducer, geminiReducer, type GeminiState } from './gemini-cli-transcript';

/** A call id Gemini CLI generated: `<tool>-<ms since epoch>-<random hex>`. */
const GENERATED_CALL_ID = /^(.+?)-(\d{10,})-[0-9a-f]+$/;

/**
 * `<tool>_<callId>.txt`: tool names use snake_case, so the call id is after the last '_'; a generated
 * call id (which starts with the tool's name) is the whole name.
 */
export function parseGeminiName(name: string): { tool?: string; callId?: string } {
  const stem = name.replace(/\.txt$/, '');
  // A call id that starts with the tool's name is the file's whole name; Gemini CLI makes one as
  // `<tool>-<Date.now()>-<random hex>` when the model gave none (`run_shell_command-1767225609960-26e8`).
  const generated = GENERATED_CALL_ID.exec(stem);
  if (generated) return { tool: generated[1], callId: stem };
  const cut = stem.lastIndexOf('_');
  if (cut <= 0) return {};
  return { tool: stem.slice(0, cut), callId: stem.slice(cut + 1) };
}

export const geminiCli: Source = {
  name: 'gemini-cli',
  defaultRoots: (dirs) => [{ path: path.join(dirs.home, '.gemini', 'tmp'), depth: 2 }],
  claim(dir) {
    if (path.basename(dir.path) !== 'tool-outputs') return [];
    return dir.entries
      .filter((e) => e.isDirectory() && e.name.startsWith('session-'))
      .map((e) => ({ source: 'gemini-cli' as const, dir: path.join(dir.path, e.name), owns: [path.join(dir.path, e.name)] }));
  },
  async describe(claim, ctx) {
    const folder = await describeManifestFolder(claim.dir);
    if (folder.blobs.length === 0) return undefined;
    const id = path.basename(claim.dir).replace(/^session-/, '');
    const projectTemp = path.dirname(path.dirname(claim.dir));
    const transcript = await findGeminiTranscript(projectTemp, id);
    const read = transcript ? await ctx.transcripts.read(transcript, ctx.listing ? geminiListingReducer : geminiReducer) : undefined;
    // Another session whose id starts with the same 8 characters is not this one.
    const state: GeminiState | undefined = read?.state.sessionId === undefined || read.state.sessionId === id ? read?.state : undefined;
    // Gemini names its own file after the call id, sanitized and lowercased (`run_shell_command__<id>.txt`).
    const callsByFileStem = new Map<string, { id: string; name: string }>();
    for (const call of state?.calls ?? []) for (const t of call.toolCalls ?? []) callsByFileStem.set(t.id.replace(/[^a-zA-Z0-9_-]/g, '_').toLowerCase(), t);
    for (const blob of folder.blobs) {
      const own = blob.attribution === 'none' ? callsByFileStem.get(blob.name.replace(/\.txt$/, '')) : undefined;
      if (own) Object.assign(blob, { tool: own.name, toolCallId: own.id, attribution: 'transcript' });
      else if (blob.attribution === 'none') {
        const parsed = parseGeminiName(blob.name);
        if (parsed.tool) Object.assign(blob, { tool: parsed.tool, toolCallId: parsed.callId, attribution: 'name' });
      }
      attribute(blob, state, state?.blobCalls.get(blob.path));
    }
    return {
      session: {
        source: 'gemini-cli',
        id,
        title: path.basename(projectTemp),
        dir: claim.dir,
        ...(state && transcript && { transcript }),
        skipped: folder.skipped + (read?.skipped ?? 0),
        notes: [],
      },
      blobs: folder.blobs,
      dependsOn: [path.join(claim.dir, MANIFEST_NAME), ...(transcript ? [transcript] : [])],
      ...(state && { calls: state.calls }),
      blobFolders: wholeFolder(claim.dir, folder.listed, folder.blobs.length),
    };
  },
  // In a bucket the blobs are the hook's, each with its record; the session file's copy ties each to the call whose
  // digest named it (by the file name its record gives: the digest named its local path).
  remote: remoteReading<GeminiState>({
    reducer: geminiReducer,
    session: (state) => ({ ...(state.sessionId ? { id: state.sessionId } : {}), calls: state.calls }),
    blob: (file, stat, record, state) => attribute(recordedBlob(file, stat, record), state, state && blobCallNamed(state, file.name)),
  }),
};

/**
 * Spillway's blob: the call is `namedBy`, the one whose result (the digest) named it, when the session file has it
 * (the record's id is the hook's own: Gemini gives hooks none); its turn is that of the API call that issued it.
 */
function attribute(blob: Described['blobs'][number], state: GeminiState | undefined, namedBy: string | undefined): Described['blobs'][number] {
  if (namedBy) Object.assign(blob, { toolCallId: namedBy, attribution: 'transcript', digestChars: state!.resultChars.get(namedBy) });
  const issuer = blob.toolCallId !== undefined ? state?.issuedBy.get(blob.toolCallId) : undefined;
  if (issuer !== undefined) blob.turn ??= issuer + 1;
  blob.kind = /shell/.test(blob.tool ?? '') ? 'shell-output' : 'tool-result';
  return blob;
}
