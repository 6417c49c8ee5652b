// `spillway`: one command per module under commands/.
import { processIO, UsageError, type CliCommand, type CliIO } from './io';
import { escapeControls, human } from './format';
import { spillCommand } from './commands/spill';
import { hookCommand } from './commands/hook';
import { listCommand } from './commands/list';
import { showCommand } from './commands/show';
import { grepCommand } from './commands/grep';
import { turnsCommand } from './commands/turns';
import { cleanCommand } from './commands/clean';

const COMMANDS: Record<string, { run: CliCommand; summary: string }> = {
  // one line per command, e.g. spill: { run: spillCommand, summary: '...' },
  list: { run: listCommand, summary: 'List every agent\'s spill sessions and blobs (--json)' },
  show: { run: showCommand, summary: 'Print a blob or a line range of it (--lines A:B)' },
  grep: { run: grepCommand, summary: 'Search every blob (ripgrep when found, else Node)' },
  turns: { run: turnsCommand, summary: 'Per-turn context growth of a session and the tokens spills saved' },
  clean: { run: cleanCommand, summary: 'Delete a session\'s blobs or by retention (--older-than, --max-total)' },
  hook: { run: hookCommand, summary: 'Claude Code PostToolUse hook; `hook install|uninstall claude-code` wires it into settings.json' },
  spill: { run: spillCommand, summary: 'Spill a tool output read on stdin; print what the model should see' },
};

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
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(human`spillway: unknown command '${name}'` + `\n\n${usage()}`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    // Messages name paths and patterns: escaped line by line (the line breaks are the message's own).
    const message = (err instanceof Error ? err.message : String(err)).split('\n').map(escapeControls).join('\n');
    io.stderr(`spillway ${name}: ${message}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2), processIO()).then((code) => {
    process.exitCode = code;
  });
}
