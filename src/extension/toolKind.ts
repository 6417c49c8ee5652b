// Which codicon a blob gets, by what kind of tool produced it. Pure.

export type ToolKind = 'shell' | 'search' | 'web' | 'file' | 'mcp' | 'hook' | 'agent' | 'other';

export function toolKind(tool: string | undefined): ToolKind {
  const t = (tool ?? '').toLowerCase();
  if (!t) return 'other';
  if (t.startsWith('mcp') || t.includes('__')) return 'mcp';
  if (t.startsWith('hook')) return 'hook';
  if (/^(bash|shell|sh|powershell|exec|run_shell_command|command|terminal)/.test(t)) return 'shell';
  if (/(grep|glob|search)/.test(t) || /^(ls|find|list_directory)$/.test(t)) return 'search';
  if (/(web|fetch|http|url|browser)/.test(t)) return 'web';
  if (/(read|write|edit|file|notebook)/.test(t)) return 'file';
  if (/(task|agent)/.test(t)) return 'agent';
  return 'other';
}

const ICONS: Record<ToolKind, string> = {
  shell: 'terminal',
  search: 'search',
  web: 'globe',
  file: 'file-code',
  mcp: 'plug',
  hook: 'zap',
  agent: 'hubot',
  other: 'output',
};

/** A codicon id (used as `new ThemeIcon(id)`). */
export function toolIcon(tool: string | undefined): string {
  return ICONS[toolKind(tool)];
}
