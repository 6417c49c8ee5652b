// `spillway`: one command per module under commands/.
import { isUsageError, processIO, type CliCommand, type CliIO } from './io';
import { escapeControls, human } from './escape';
import { tuneV8ForCommands } from './v8-defaults';
import { failIfUnfinished } from '../common/unfinished';
import { remoteRootIn } from './remote-root';

// Exported for the tests, which run it in a process of their own (dist/cli.js).
export { failIfUnfinished };

// Each command is loaded when it runs: the built CLI keeps each in a file of its own (dist/cli-NAME.js,
// esbuild.mjs), so a command does not pay to load the others (the catalog, ripgrep's runner, the spill engine).
// `failure`: the status of a command that failed (default 1). grep's is 2, as grep's and ripgrep's are: its 1 says that nothing matched.
const COMMANDS: Record<string, { load: () => Promise<CliCommand>; summary: string; failure?: number }> = {
  list: { load: () => import('./commands/list.js').then((m) => m.listCommand), summary: 'List every agent\'s spill sessions and blobs (--json)' },
  show: { load: () => import('./commands/show.js').then((m) => m.showCommand), summary: 'Print a blob or a line range of it (--lines A:B)' },
  grep: { load: () => import('./commands/grep.js').then((m) => m.grepCommand), summary: 'Search every blob (ripgrep when found, else Node)', failure: 2 },
  turns: { load: () => import('./commands/turns.js').then((m) => m.turnsCommand), summary: 'Per-turn context growth of a session and the tokens spills saved' },
  clean: { load: () => import('./commands/clean.js').then((m) => m.cleanCommand), summary: 'Delete a session\'s blobs or by retention (--older-than, --max-total)' },
  hook: { load: () => import('./commands/hook.js').then((m) => m.hookCommand), summary: 'Agent hooks (Claude Code: PostToolUse, Stop); `hook install|uninstall AGENT` wires them into its settings' },
  spill: { load: () => import('./commands/spill.js').then((m) => m.spillCommand), summary: 'Spill a tool output read on stdin; print what the model should see' },
  upload: { load: () => import('./commands/upload.js').then((m) => m.uploadCommand), summary: 'Copy the blobs queued for the object store (SPILLWAY_STORE=s3://...) to it' },
};

/** The command so named; none for the names every object answers to (`constructor`, `__proto__`). */
function commandNamed(name: string): (typeof COMMANDS)[string] | undefined {
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

function usage(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return ['usage: spillway <command> [options]', '', 'commands:', ...rows, '', 'Run `spillway <command> --help` for its options.', ''].join('\n');
}

export async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) {
    io.stderr(usage()); // a usage error: not output a pipe should receive
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage());
    return 0;
  }
  const command = commandNamed(name);
  if (command && remoteRootIn(name, rest)) return runRemote(name, rest, io, command.failure);
  if (!command) {
    io.stderr(human`spillway: unknown command '${name}'` + `\n\n${usage()}`);
    return 2;
  }
  try {
    return await (await command.load())(rest, io);
  } catch (err) {
    // Messages name paths and patterns: escaped line by line (the line breaks are the message's own).
    const message = errorMessage(err).split('\n').map(escapeControls).join('\n');
    io.stderr(`spillway ${name}: ${message}\n`);
    return isUsageError(err) ? 2 : command.failure ?? 1;
  }
}

/** A catalog command on an s3:// root: the bucket's own reader (commands/remote.ts), errors said as for any command. */
async function runRemote(name: string, rest: string[], io: CliIO, failure = 1): Promise<number> {
  try {
    return await (await import('./commands/remote.js')).remoteCommand(name, rest, io);
  } catch (err) {
    io.stderr(`spillway ${name}: ${errorMessage(err).split('\n').map(escapeControls).join('\n')}\n`);
    return isUsageError(err) ? 2 : failure;
  }
}

/**
 * What went wrong, in words: a failed system call as `PATH: Reason (CODE)`, the path first as cat and grep say it
 * (Node's own message, `ENOENT: no such file or directory, open 'PATH'`, speaks to a programmer); the code kept for
 * a search or a script.
 */
export function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const { code, path } = err as NodeJS.ErrnoException;
  const reason = code ? new RegExp(`^${code}: (.+?), \\w+ '`).exec(err.message)?.[1] : undefined;
  if (!reason || path === undefined) return err.message;
  // The path escaped here: main splits a message at its line breaks, and one in a file name would start a line of its own.
  return `${escapeControls(path)}: ${reason[0]!.toUpperCase()}${reason.slice(1)} (${code})`;
}

if (require.main === module) {
  tuneV8ForCommands();
  const argv = process.argv.slice(2);
  const io = processIO();
  const work = main(argv, io).then((code) => {
    process.exitCode = code;
  });
  const name = argv[0] ?? '';
  failIfUnfinished(work, commandNamed(name)?.failure ?? 1, (text) => io.stderr(human`spillway ${name}: ` + text));
}
