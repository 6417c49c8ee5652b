// URIs of the read-only "slice" documents that show a line range of a blob too
// big for an editor. The URI carries everything the provider needs, so a
// reload of the window reopens the same slice. Pure (strings only).

import { formatBytes, formatCount } from './format';
import type { LineRange } from './lineRange';

export const SLICE_SCHEME = 'spillway-slice';

export interface SliceRequest {
  /** Absolute file path of the blob. */
  file: string;
  range: LineRange;
}

/** Path part shown in the tab title: `/<name> (lines 120-180)`; query holds the data. */
export function sliceUriParts(req: SliceRequest): { scheme: string; path: string; query: string } {
  const name = req.file.split(/[\\/]/).pop() ?? 'blob';
  const query = new URLSearchParams({ file: req.file, start: String(req.range.start), end: String(req.range.end) }).toString();
  return { scheme: SLICE_SCHEME, path: `/${name} (lines ${req.range.start}-${req.range.end})`, query };
}

export function parseSliceQuery(query: string): SliceRequest | undefined {
  const q = new URLSearchParams(query);
  const file = q.get('file');
  const start = Number(q.get('start'));
  const end = Number(q.get('end'));
  if (!file || !Number.isInteger(start) || !Number.isInteger(end) || start < 1 || end < start) return undefined;
  return { file, range: { start, end } };
}

/** The header lines above the slice text; the text itself starts right after. */
export function sliceHeader(req: SliceRequest, totalBytes: number, totalLines: number | undefined, shownLines: number): string[] {
  const last = req.range.start + shownLines - 1;
  const of = totalLines === undefined ? '' : ` of ${formatCount(totalLines)}`;
  const name = req.file.split(/[\\/]/).pop() ?? req.file;
  // The name first: a long path would push it past the editor's right edge.
  return [
    `# Spillway: lines ${req.range.start}-${last}${of} of ${name} (${formatBytes(totalBytes)}, too big for an editor; this read-only view holds only these lines)`,
    `# File: ${req.file}`,
    '',
  ];
}
