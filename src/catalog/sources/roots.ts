// Default roots per source, from the environment (never hard-coded paths).
import * as os from 'node:os';
import * as path from 'node:path';

export interface EnvDirs {
  home: string;
  tmp: string;
  xdgData: string;
  xdgState: string;
  env: NodeJS.ProcessEnv;
}

export function envDirs(env: NodeJS.ProcessEnv = process.env): EnvDirs {
  const home = env.HOME || env.USERPROFILE || os.homedir();
  return {
    home,
    tmp: env.TMPDIR || env.TMP || env.TEMP || os.tmpdir(),
    xdgData: env.XDG_DATA_HOME || path.join(home, '.local', 'share'),
    xdgState: env.XDG_STATE_HOME || path.join(home, '.local', 'state'),
    env,
  };
}

/** The spill engine's default root (one definition, in the engine). */
export { defaultSpillRoot as spillwayDefaultRoot } from '../../spill/default-root';
