// The registry of agent sources by name: one line per source, its name and the label people see. Everything
// else keyed by source (the SourceName type, the CLI's --source choices, the Source objects in sources/index.ts)
// derives from it, so a source added here but not implemented, or implemented but not named, fails to compile.
// No imports: every room of the catalog may read it.

export const SOURCE_LABELS = {
  'claude-code': 'Claude Code',
  pi: 'pi',
  spillway: 'Spillway',
  'gemini-cli': 'Gemini CLI',
  opencode: 'opencode',
  dsh: 'dsh',
  orgrt: 'orgrt',
  goose: 'goose',
  openhands: 'OpenHands',
  'roo-code': 'Roo Code',
  cline: 'Cline',
  codex: 'Codex CLI',
} as const;

/** The agent layouts the catalog understands (one module each in `sources/`). */
export type SourceName = keyof typeof SOURCE_LABELS;

export const SOURCE_NAMES = Object.keys(SOURCE_LABELS) as readonly SourceName[];
