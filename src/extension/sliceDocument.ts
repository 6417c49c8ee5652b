// Read-only documents holding a line range of a blob too big for an editor
// (VS Code refuses to sync files over 50 MB to extensions). The text comes
// from the catalog's slice reader, which never loads the whole file.

import * as fs from 'node:fs/promises';
import * as vscode from 'vscode';
import type { CatalogService } from './catalogService';
import type { LineRange } from './lineRange';
import { parseSliceQuery, sliceHeader, sliceUriParts, SLICE_SCHEME } from './sliceUri';

/** Cap on one slice's text, so a range over a 1 GB single-line file stays bounded. */
const SLICE_MAX_BYTES = 8 * 1024 * 1024;

export class SliceDocumentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly service: CatalogService) {}

  static uri(file: string, range: LineRange): vscode.Uri {
    return vscode.Uri.from(sliceUriParts({ file, range }));
  }

  /** Lines of the header above the text, so callers can select the slice body. */
  static readonly headerLines = 3;

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const req = parseSliceQuery(uri.query);
    if (!req) return '# Spillway: this slice link is malformed.';
    const catalog = await this.service.ready();
    if (!catalog) return '# Spillway: the catalog is not available.';
    try {
      const [slice, stat] = await Promise.all([
        catalog.readSlice(req.file, req.range.start, req.range.end, { maxBytes: SLICE_MAX_BYTES }),
        fs.stat(req.file),
      ]);
      const shown = Math.max(0, slice.endLine - slice.startLine + 1);
      const header = sliceHeader(req, stat.size, catalog.blob(req.file)?.lines, shown);
      const notes = [slice.eof ? '# (end of file)' : '', slice.truncated ? `# (cut at ${SLICE_MAX_BYTES} bytes)` : ''].filter(Boolean);
      return [...header, slice.text, ...notes].join('\n');
    } catch (err) {
      return `# Spillway: cannot read ${req.file}: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
}

export { SLICE_SCHEME };
