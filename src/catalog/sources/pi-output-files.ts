// pi's own output files in TMPDIR (`pi-<kind>-<random hex><ext>`: bash,
// powershell, mcp, codemode), named by a tool result's
// `details.fullOutputPath`. Shared by the catalog and the pi extension, which
// points the model at such a file instead of copying it.
import * as path from 'node:path';

export const PI_OUTPUT_FILE = /^pi-[a-z]+-[0-9a-f]{8,}(\.[A-Za-z0-9]+)?$/;

/** An absolute path to one of pi's output files. */
export function isPiOutputPath(file: string): boolean {
  return path.isAbsolute(file) && PI_OUTPUT_FILE.test(path.basename(file));
}
