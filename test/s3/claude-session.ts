// The real Claude Code 2.1.332 session (run2) the bucket tests spill from: its transcript and the outputs Claude
// Code persisted, copied under a config folder of the test's own, and its recorded hook inputs pointed there.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REAL_CLAUDE_FIXTURES } from '../fixtures/build-home';

export const SESSION = 'a8596db4-f8da-40c2-9db5-c17f7cb847a8';
const FIXTURE_CONFIG = '/home/dev/.claude';
const fixture = path.join(REAL_CLAUDE_FIXTURES, 'run2');
const project = (config: string) => path.join(config, 'projects', '-home-dev-work');

/** Copies the session under `config` (`appended` after its transcript); its transcript file and session folder. */
export function copyRealSession(config: string, appended = ''): { transcriptFile: string; sessionDir: string } {
  const sessionDir = path.join(project(config), SESSION);
  const from = path.join(project(fixture), SESSION, 'tool-results');
  fs.mkdirSync(path.join(sessionDir, 'tool-results'), { recursive: true });
  for (const name of fs.readdirSync(from)) fs.copyFileSync(path.join(from, name), path.join(sessionDir, 'tool-results', name));
  const transcriptFile = path.join(project(config), `${SESSION}.jsonl`);
  fs.writeFileSync(transcriptFile, fs.readFileSync(path.join(project(fixture), `${SESSION}.jsonl`), 'utf8') + appended);
  return { transcriptFile, sessionDir };
}

/** A recorded PostToolUse input (`hookstdin-1.json`, `hookstdin-2.json`) with its paths under `config`. */
export function hookInput(event: string, config: string): string {
  return fs.readFileSync(path.join(fixture, 'hook-stdin', event), 'utf8').split(FIXTURE_CONFIG).join(config);
}
