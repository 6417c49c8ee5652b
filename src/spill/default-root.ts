// The spill store's default root, apart from the store so that the catalog, which lists it among its roots, does not
// load the store (and `node:crypto` with it) at every command's start.
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A durable per-user state folder (never /tmp, which is lost at reboot):
 * `$XDG_STATE_HOME/spillway/spills`, else `~/.local/state/spillway/spills`
 * (`%LOCALAPPDATA%\spillway\spills` on Windows).
 */
export function defaultSpillRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (process.platform === 'win32' && env.LOCALAPPDATA) return path.join(env.LOCALAPPDATA, 'spillway', 'spills');
  const xdg = env.XDG_STATE_HOME;
  const state = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(state, 'spillway', 'spills');
}
