// Every source, in the order folders are offered to them: the first that
// claims a folder owns it (Spillway's manifest before dsh's bare shape; a Roo
// Code task folder before Claude Code's uuid-named session folder). Keyed by
// the names in names.ts, so a name without its module (or a module under a
// name not registered) is a compiler error.
import type { SourceName } from '../types';
import type { Source } from './source';
import { claudeCode } from './claude-code';
import { cline } from './cline';
import { codex } from './codex';
import { dsh } from './dsh';
import { geminiCli } from './gemini-cli';
import { goose } from './goose';
import { opencode } from './opencode';
import { openhands } from './openhands';
import { orgrt } from './orgrt';
import { pi } from './pi';
import { rooCode } from './roo-code';
import { spillway } from './spillway';

const BY_NAME = {
  'roo-code': rooCode,
  'claude-code': claudeCode,
  pi,
  'gemini-cli': geminiCli,
  opencode,
  codex,
  orgrt,
  goose,
  openhands,
  cline,
  spillway,
  dsh,
} as const satisfies { readonly [N in SourceName]: Source };

export const SOURCES: readonly Source[] = Object.values(BY_NAME);

export function sourcesNamed(names?: SourceName[]): Source[] {
  return names ? SOURCES.filter((s) => names.includes(s.name)) : [...SOURCES];
}
