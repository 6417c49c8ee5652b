import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexRuleFolders, looksLikeForcedRm, parseRules, readCodexRules, restrictiveRuleMatch, type PrefixRule } from '../../../src/adapters/codex-rules';

const rulesOf = (text: string): PrefixRule[] => {
  const parsed = parseRules(text);
  if (!parsed.ok) throw new Error(parsed.why);
  return parsed.rules;
};

describe('parseRules: the subset of Starlark rule files use', () => {
  it('reads keyword and positional arguments, alternatives, comments, trailing commas, both quotes and escapes', () => {
    const rules = rulesOf(`# comment
prefix_rule(pattern = ["git", ["push", "fetch"]], decision = "prompt", justification = "ask first")  # trailing
prefix_rule(
    ['rm', "-r"],
    'forbidden',
    match = [["rm", "-r", "x"], "rm -r y"],
    not_match = ["rm x"],
)
prefix_rule(pattern=["say", "it\\'s \\"quoted\\""])
network_rule(host = "example.com", protocol = "https", decision = "deny")
host_executable(name = "git", paths = ["/usr/bin/git"])
`);
    expect(rules).toEqual([
      { pattern: [['git'], ['push', 'fetch']], decision: 'prompt' },
      { pattern: [['rm'], ['-r']], decision: 'forbidden' },
      { pattern: [['say'], [`it's "quoted"`]], decision: 'allow' },
    ]);
  });

  it.each([
    ['a variable', 'RM = "rm"\nprefix_rule(pattern = [RM], decision = "forbidden")'],
    ['a function definition', 'def f():\n    pass'],
    ['a load statement', 'load("x.star", "y")'],
    ['an f-string', 'prefix_rule(pattern = [f"rm"], decision = "forbidden")'],
    ['a triple-quoted string', 'prefix_rule(pattern = ["""rm"""], decision = "forbidden")'],
    ['an unknown decision', 'prefix_rule(pattern = ["rm"], decision = "deny")'],
    ['an unknown function', 'allow_rule(pattern = ["rm"])'],
    ['an unknown argument', 'prefix_rule(pattern = ["rm"], decison = "forbidden")'],
    ['an unclosed string', 'prefix_rule(pattern = ["rm], decision = "forbidden")'],
    ['a list comprehension', 'prefix_rule(pattern = [x for x in ["rm"]], decision = "forbidden")'],
    ['a concatenation', 'prefix_rule(pattern = ["r" + "m"], decision = "forbidden")'],
    ['an empty pattern', 'prefix_rule(pattern = [], decision = "forbidden")'],
  ])('does not understand %s', (_what, text) => {
    expect(parseRules(text).ok).toBe(false);
  });
});

describe('restrictiveRuleMatch: never fewer matches than Codex sees', () => {
  const rules = rulesOf(`prefix_rule(pattern = ["touch"], decision = "forbidden")
prefix_rule(pattern = ["git", ["push", "reset"]], decision = "prompt")
prefix_rule(pattern = ["npm", "test"], decision = "allow")
prefix_rule(pattern = ["/opt/bin/deploy"], decision = "forbidden")`);

  it.each([
    'touch x',
    '"touch" x',
    "to'u'ch x",
    't\\ouch x',
    '/usr/bin/touch x',
    'echo a && touch x',
    'echo a;touch x',
    'true || touch x',
    'echo a | touch x',
    'echo $(touch x)',
    'echo `touch x`',
    'bash -c "touch x"',
    "sh -lc 'echo a; touch x'",
    'find . -exec touch {} \\;',
    'if true; then\n  touch x\nfi',
    'git push origin main',
    'git reset --hard',
    'deploy now',
  ])('%j is left to Codex', (command) => {
    expect(restrictiveRuleMatch(command, rules)).toBeDefined();
  });

  it.each(['npm test', 'echo touching', 'git status', 'git log --oneline', 'make build', 'cat touch.txt'])('%j may be wrapped', (command) => {
    expect(restrictiveRuleMatch(command, rules)).toBeUndefined();
  });
});

describe('looksLikeForcedRm: Codex asks about (or refuses) rm with a force option', () => {
  it.each(['rm -f x', 'rm -rf x', 'rm -r -f x', 'rm --force x', 'rm x -f', 'sudo rm -fr /tmp/a', '/bin/rm -f x', 'echo a && rm -rf "$T"', 'for t in a b; do rm -r -f "$t"; done', 'echo "$(rm -rf x)"'])('%j', (command) => {
    expect(looksLikeForcedRm(command)).toBe(true);
  });
  it.each(['rm x', 'rm -r x', 'echo ok', 'npm run build -- --force'])('not %j', (command) => {
    expect(looksLikeForcedRm(command)).toBe(false);
  });
});

describe('readCodexRules', () => {
  it('reads every *.rules of every layer and fails on the first file it does not understand', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-codex-rules-'));
    try {
      const home = path.join(tmp, 'home');
      const project = path.join(tmp, 'project', 'sub');
      fs.mkdirSync(path.join(home, 'rules'), { recursive: true });
      fs.mkdirSync(path.join(tmp, 'project', '.codex', 'rules'), { recursive: true });
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(path.join(home, 'rules', 'default.rules'), 'prefix_rule(pattern = ["touch"], decision = "forbidden")\n');
      fs.writeFileSync(path.join(home, 'rules', 'notes.txt'), 'not a rules file');
      fs.writeFileSync(path.join(tmp, 'project', '.codex', 'rules', 'team.rules'), 'prefix_rule(pattern = ["mkdir"], decision = "prompt")\n');
      const folders = codexRuleFolders(home, project);
      expect(folders).toContain(path.join(home, 'rules'));
      expect(folders).toContain(path.join(tmp, 'project', '.codex', 'rules'));
      const read = await readCodexRules(folders);
      expect(read.ok && read.rules.map((r) => r.pattern[0]![0])).toEqual(['touch', 'mkdir']);
      fs.writeFileSync(path.join(tmp, 'project', '.codex', 'rules', 'z.rules'), 'X = 1\n');
      const bad = await readCodexRules(folders);
      expect(bad.ok).toBe(false);
      expect(!bad.ok && bad.why).toContain('z.rules');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
