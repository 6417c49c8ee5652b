// Search blobs: ripgrep when one is found, else a streaming Node search that
// yields the same matches.
import type { GrepMatch, GrepOptions, GrepProgress, GrepSummary } from './types';

/** Search `options.paths` (required here); streams each match to onMatch. */
export async function grep(
  options: GrepOptions & { paths: string[] },
  onMatch: (match: GrepMatch) => void,
  signal?: AbortSignal,
  onProgress?: (progress: GrepProgress) => void,
): Promise<GrepSummary> {
  void options; void onMatch; void signal; void onProgress;
  throw new Error('not implemented yet');
}
