// Every source, in the order folders are offered to them: the first that
// claims a folder owns it (Spillway's manifest before dsh's bare shape; a Roo
// Code task folder before Claude Code's uuid-named session folder).
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

export const SOURCES: readonly Source[] = [rooCode, claudeCode, pi, geminiCli, opencode, codex, orgrt, goose, openhands, cline, spillway, dsh];

export function sourcesNamed(names?: SourceName[]): Source[] {
  return names ? SOURCES.filter((s) => names.includes(s.name)) : [...SOURCES];
}
