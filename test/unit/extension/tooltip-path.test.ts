// The blob tooltip shows the path as one inline code span: a file name with
// line breaks must not end the span and have the rest rendered as Markdown
// (a heading, a clickable link).
import { describe, expect, it } from 'vitest';
import type { BlobInfo, SessionInfo } from '../../../src/catalog/types';
import { blobTooltipMarkdown } from '../../../src/extension/treeModel';

const path = '/d/a/x\n\n# Click [here](https:example.com)\r\n\r\ny.txt';
const blob: BlobInfo = { key: path, path, sessionKey: 's', name: 'x', kind: 'tool-result', bytes: 10, createdAt: '2026-01-01T00:00:00Z', mtimeMs: 0, attribution: 'none' };
const session: SessionInfo = { key: 's', source: 'claude-code', id: 's', dir: '/d/a', root: '/d', bytes: 10, updatedAt: '2026-01-01T00:00:00Z', skipped: 0, notes: [], blobs: [blob] };

describe('blob tooltip path', () => {
  it('keeps a path with line breaks on one line inside its code span', () => {
    const md = blobTooltipMarkdown(blob, session, undefined, 100);
    const line = md.split('\n').find((l) => l.startsWith('`/d/a/x'));
    expect(line).toBeDefined();
    expect(line!.endsWith('y.txt`')).toBe(true);
    expect(md.split('\n').some((l) => l.startsWith('# '))).toBe(false);
    expect(md).not.toContain('\r');
  });
});
