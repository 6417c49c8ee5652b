// Gemini CLI: `~/.gemini/tmp/<project>/tool-outputs/session-<id>/<tool>_<callId>.txt`,
// or `<callId>.txt` when the call id starts with the tool's name (both lowercased).
import * as path from 'node:path';
import type { Source } from './source';
import { describeManifestFolder, wholeFolder } from './common';

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
  async describe(claim) {
    const folder = await describeManifestFolder(claim.dir);
    if (folder.blobs.length === 0) return undefined;
    for (const blob of folder.blobs) {
      if (blob.attribution !== 'none') continue;
      const parsed = parseGeminiName(blob.name);
      if (parsed.tool) Object.assign(blob, { tool: parsed.tool, toolCallId: parsed.callId, attribution: 'name' });
      blob.kind = /shell/.test(blob.tool ?? '') ? 'shell-output' : 'tool-result';
    }
    return {
      session: {
        source: 'gemini-cli',
        id: path.basename(claim.dir).replace(/^session-/, ''),
        title: path.basename(path.dirname(path.dirname(claim.dir))),
        dir: claim.dir,
        skipped: folder.skipped,
        notes: [],
      },
      blobs: folder.blobs,
      dependsOn: [folder.manifest],
      blobFolders: wholeFolder(claim.dir, folder.listed, folder.blobs.length),
    };
  },
};
