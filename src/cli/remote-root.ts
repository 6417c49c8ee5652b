// Whether a catalog command is aimed at an object store: its --root (or show's PATH) is an s3:// location.
// Apart from commands/remote.ts so that deciding does not load the AWS SDK.
import { isS3Url } from '../spill/remote/s3-location';

const REMOTE_COMMANDS = ['list', 'show', 'grep', 'turns', 'clean'];

export function remoteRootIn(name: string, argv: readonly string[]): boolean {
  if (!REMOTE_COMMANDS.includes(name)) return false;
  return argv.some((a, i) => (argv[i - 1] === '--root' && isS3Url(a)) || a.startsWith('--root=s3://') || (name === 'show' && isS3Url(a) && argv[i - 1] !== '--lines'));
}
