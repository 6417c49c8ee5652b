// Where ripgrep is: the configured path, else the one VS Code ships under its
// app root. `exists` is injected so the search order is unit-testable.

import * as path from 'node:path';

export function ripgrepCandidates(appRoot: string, platform: NodeJS.Platform = process.platform, arch: string = process.arch): string[] {
  const exe = platform === 'win32' ? 'rg.exe' : 'rg';
  // Older builds ship @vscode/ripgrep; newer ones @vscode/ripgrep-universal with one folder per platform.
  return ['node_modules', 'node_modules.asar.unpacked'].flatMap((dir) => [
    path.join(appRoot, dir, '@vscode', 'ripgrep', 'bin', exe),
    path.join(appRoot, dir, '@vscode', 'ripgrep-universal', 'bin', `${platform}-${arch}`, exe),
  ]);
}

/** The rg binary to use, or undefined to let the catalog grep in-process. */
export function findRipgrep(configured: string, appRoot: string, exists: (p: string) => boolean): string | undefined {
  if (configured.trim()) return exists(configured) ? configured : undefined;
  return ripgrepCandidates(appRoot).find(exists);
}
