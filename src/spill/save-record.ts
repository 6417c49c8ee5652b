// What the manifest records of one save, and the facts (sha256, bytes, lines) of a file already written.

import { constants as C, promises as fsp } from 'node:fs';
import { jsonText } from '../common/json-text';
import { MANIFEST_VERSION, type ManifestRecord } from './manifest';
import { ContentTally } from './text';
import { type SpillOwner, type SpillSource } from './types';

/** The manifest record of one save: who and what it was for, plus the file's facts. */
export function manifestRecord(
  input: { owner: SpillOwner; source: SpillSource; args?: unknown; turn?: number },
  file: string,
  facts: { bytes: number; lines: number; sha256: string },
): ManifestRecord {
  return {
    v: MANIFEST_VERSION,
    file,
    tool: input.source.toolName,
    toolCallId: input.source.callId,
    ...(input.args !== undefined ? { args: boundedArgs(input.args) } : {}),
    bytes: facts.bytes,
    lines: facts.lines,
    sha256: facts.sha256,
    createdAt: new Date().toISOString(),
    sessionId: input.owner.sessionId,
    ...(input.turn !== undefined ? { turn: input.turn } : {}),
  };
}

/** A record's `args` over this many characters of JSON is cut down (boundedArgs). */
const MAX_RECORD_ARGS = 16 * 1024;

/**
 * A call's arguments as a manifest record keeps them: whole when small; else each string cut to 1,024
 * characters and each list to 20 items (a Write's file body, an MCP call's payload), and failing that the
 * start of their JSON. Every dedup lookup of a new process reads the manifest whole: 300 KB of arguments per
 * record made each spill of a long session take seconds.
 */
export function boundedArgs(args: unknown): unknown {
  const json = jsonText(args);
  if (json.length <= MAX_RECORD_ARGS) return args;
  const cut = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return value.length > 1024 ? `${value.slice(0, 1023)}…` : value;
    if (typeof value !== 'object' || value === null) return value;
    if (depth >= 8) return '…';
    if (Array.isArray(value)) return value.slice(0, 20).map((v) => cut(v, depth + 1)).concat(value.length > 20 ? ['…'] : []);
    return Object.fromEntries(Object.entries(value).slice(0, 50).map(([k, v]) => [k.slice(0, 200), cut(v, depth + 1)]));
  };
  const smaller = cut(args, 0);
  const smallerJson = jsonText(smaller);
  return smallerJson.length <= MAX_RECORD_ARGS ? smaller : `${smallerJson.slice(0, MAX_RECORD_ARGS - 1)}…`;
}

/** sha256, byte and line counts of a file, streamed. */
export async function hashAndCount(file: string): Promise<{ sha256: string; bytes: number; lines: number }> {
  const tally = new ContentTally();
  const handle = await fsp.open(file, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) tally.add(chunk);
  } finally {
    await handle.close();
  }
  return tally.finish();
}

