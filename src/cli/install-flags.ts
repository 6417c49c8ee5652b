// The flags every `spillway hook install|uninstall AGENT` takes: where
// (--user, the default, or --project DIR), and on install the agent's own
// value flag (--command CMD, --plugin FILE) and, where the agent asks users to
// trust hooks, --trust.
import { UsageError } from './io';

export type InstallScope = { kind: 'user' } | { kind: 'project'; dir: string };

export interface InstallFlagSpec {
  /** The install-only flag that takes a value, and what its error calls that value. */
  value?: { flag: '--command' | '--plugin'; what: string };
  /** Whether --trust is taken (on install). */
  trust?: boolean;
}

export interface InstallFlags {
  scope: InstallScope;
  value?: string;
  trust: boolean;
}

export function parseInstallFlags(action: 'install' | 'uninstall', flags: readonly string[], spec: InstallFlagSpec): InstallFlags {
  const parsed: InstallFlags = { scope: { kind: 'user' }, trust: false };
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i];
    if (flag === '--user') parsed.scope = { kind: 'user' };
    else if (flag === '--project') {
      const dir = flags[++i];
      if (!dir) throw new UsageError('--project needs a directory');
      parsed.scope = { kind: 'project', dir };
    } else if (spec.value && flag === spec.value.flag && action === 'install') {
      parsed.value = flags[++i];
      if (!parsed.value) throw new UsageError(`${spec.value.flag} needs ${spec.value.what}`);
    } else if (spec.trust && flag === '--trust' && action === 'install') parsed.trust = true;
    else throw new UsageError(`unknown option '${flag}'`);
  }
  return parsed;
}
