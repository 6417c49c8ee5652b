// Gemini CLI: `~/.gemini/tmp/<project>/tool-outputs/session-<id>/<tool>_<callId>.txt`.
import * as path from 'node:path';
import type { Source } from '../source';
import { describeManifestFolder, wholeFolder } from './common';

/** `<tool>_<callId>.txt`: tool names use snake_case, so the call id is after the last '_'. */
export function parseGeminiName(name: string): { tool?: string; callId?: string } {
  const stem = name.replace(/\.txt$/, '');
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
      dependsOn: [],
      blobFolders: wholeFolder(folder.files, folder.blobs),
    };
  },
};
