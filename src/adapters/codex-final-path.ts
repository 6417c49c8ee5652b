// Where a Codex capture ends up: `<CODEX_HOME>/spillway/<session>/bash-<call id>.txt`,
// beside the session's manifest. The catalog's `codex` source reads this folder.
import * as path from 'node:path';
import { type LocalSpillStore, sanitizeSegment } from '../spill/local-store';
import { openSpillStore } from '../spill/open-store';
import type { SpillLogger } from '../spill/types';

/** The folder under `$CODEX_HOME` that holds one folder per Codex session (its manifest and captures). */
export const CODEX_SPILL_FOLDER = 'spillway';
const CAPTURE_PREFIX = 'bash-';

/** The capture file's name for a call, the same in the temporary folder and in its final one. */
export function captureFileName(callId: string): string {
  return sanitizeSegment(`${CAPTURE_PREFIX}${callId}.txt`);
}

export function finalCapturePath(codexHome: string, sessionId: string, callId: string): string {
  return path.join(codexHome, CODEX_SPILL_FOLDER, sanitizeSegment(sessionId), captureFileName(callId));
}

export interface CaptureLocation {
  root: string;
  sessionDir: string;
  sessionId: string;
  callId: string;
}

/** `<CODEX_HOME>/spillway/<session>/bash-<call id>.txt`, or undefined for any other path. */
export function codexCaptureLocation(file: string): CaptureLocation | undefined {
  if (!path.isAbsolute(file)) return undefined;
  const resolved = path.resolve(file);
  const name = path.basename(resolved);
  const sessionDir = path.dirname(resolved);
  const root = path.dirname(sessionDir);
  if (path.basename(root) !== CODEX_SPILL_FOLDER || !name.startsWith(CAPTURE_PREFIX) || !name.endsWith('.txt')) return undefined;
  const callId = name.slice(CAPTURE_PREFIX.length, -'.txt'.length);
  if (callId === '') return undefined;
  return { root, sessionDir, sessionId: path.basename(sessionDir), callId };
}

/** The store of one session's final folder (it makes the folders 0700, never through a symlink). */
export function codexSessionStore(root: string, sessionDir: string, logger?: SpillLogger): LocalSpillStore {
  return openSpillStore({ root, layout: { dirFor: () => sessionDir }, agent: 'codex', ...(logger ? { logger } : {}) });
}
