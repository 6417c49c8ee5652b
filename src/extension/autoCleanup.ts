// Cleanup that runs itself (opt-in, `spillway.cleanup.auto`): at start and
// daily it applies the policy file (src/catalog/clean/cleanupPolicy.ts) that the
// settings write and `spillway clean --policy` reads. The first run shows what
// it would delete and waits for a yes; later runs delete and log. Pins live in
// the same file, so a cron job respects them too.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { planPolicyClean, readCleanupPolicy, writeCleanupPolicy, type CleanupPolicy } from '../catalog/clean/cleanupPolicy';
import type { CatalogService } from './catalogService';
import { formatBytes } from './format';
import { Disposable } from './lifecycle';
import { autoCleanupQuestion, cleanResultMessage, deleteMode, policyLimits } from './messages';
import type { SpillwaySettings } from './settings';

const CONFIRMED_KEY = 'spillway.cleanup.confirmed';
const DAY_MS = 86_400_000;

export class AutoCleanup extends Disposable {
  private pins = new Set<string>();
  private running = false;

  constructor(
    private readonly service: CatalogService,
    private readonly settings: () => SpillwaySettings,
    private readonly state: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
    private readonly onPinsChanged: () => void,
  ) {
    super();
    const daily = setInterval(() => void this.run('daily'), DAY_MS);
    this.register({ dispose: () => clearInterval(daily) });
    void this.loadPins();
  }

  isPinned(file: string): boolean {
    return this.pins.has(path.resolve(file));
  }

  private async policy(): Promise<CleanupPolicy> {
    return (await readCleanupPolicy()) ?? { pinned: [] };
  }

  private async loadPins(): Promise<void> {
    try {
      this.pins = new Set((await this.policy()).pinned.map((p) => path.resolve(p)));
      this.onPinsChanged();
    } catch (err) {
      this.log.warn(`cleanup policy: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async setPinned(files: string[], pinned: boolean): Promise<void> {
    const policy = await this.policy();
    const set = new Set(policy.pinned.map((p) => path.resolve(p)));
    for (const f of files) (pinned ? set.add(path.resolve(f)) : set.delete(path.resolve(f)));
    const file = await writeCleanupPolicy({ ...policy, pinned: [...set] });
    this.log.info(`${pinned ? 'Pinned' : 'Unpinned'} ${files.length} blob(s) in ${file}`);
    this.pins = set;
    this.onPinsChanged();
  }

  /** The settings into the policy file (keeping its pins), so `spillway clean --policy` applies the same. */
  async syncPolicy(): Promise<void> {
    const s = this.settings();
    const limits = policyLimits(s.cleanupMaxAge, s.cleanupMaxTotalSize);
    if ('error' in limits) {
      void vscode.window.showWarningMessage(`Spillway: ${limits.error}`);
      return;
    }
    const policy = await this.policy();
    const next: CleanupPolicy = { ...limits, pinned: policy.pinned };
    if (JSON.stringify(next) === JSON.stringify(policy)) return;
    this.log.info(`Cleanup policy written to ${await writeCleanupPolicy(next)}`);
  }

  /** Applies the policy when the setting is on; asks first the first time. */
  async run(why: 'start' | 'daily' | 'settings'): Promise<void> {
    const s = this.settings();
    if (!s.cleanupAuto || this.running) return;
    this.running = true;
    try {
      const catalog = await this.service.scanned();
      if (!catalog) return;
      const policy = await readCleanupPolicy();
      if (!policy || (policy.maxAgeDays === undefined && policy.maxTotalBytes === undefined)) {
        this.log.info('Automatic cleanup is on but no limit is set (spillway.cleanup.maxAge, spillway.cleanup.maxTotalSize).');
        return;
      }
      const plan = await planPolicyClean(catalog, policy);
      this.log.info(`Automatic cleanup (${why}): ${plan.items.length} blob(s), ${formatBytes(plan.bytes)}; kept ${plan.kept.recent} recent, ${plan.kept.pinned} pinned`);
      if (!plan.items.length) return;
      if (!this.state.get<boolean>(CONFIRMED_KEY)) {
        const limits = [s.cleanupMaxAge && `older than ${s.cleanupMaxAge}`, s.cleanupMaxTotalSize && `over ${s.cleanupMaxTotalSize} in all`].filter(Boolean).join(', ');
        for (const i of plan.items) this.log.info(`  would delete ${i.path} (${formatBytes(i.bytes)})`);
        const answer = await vscode.window.showWarningMessage(autoCleanupQuestion(plan, limits), { modal: true, detail: plan.items.slice(0, 12).map((i) => i.path).join('\n') + (plan.items.length > 12 ? `\n… and ${plan.items.length - 12} more (see the Spillway output)` : '') }, 'Delete and Keep Cleaning', 'Turn Off');
        if (answer === 'Turn Off') {
          await vscode.workspace.getConfiguration('spillway').update('cleanup.auto', false, vscode.ConfigurationTarget.Global);
          return;
        }
        if (answer !== 'Delete and Keep Cleaning') return;
        await this.state.update(CONFIRMED_KEY, true);
      }
      const mode = deleteMode(s.useTrash, { remote: vscode.env.remoteName !== undefined, web: vscode.env.uiKind === vscode.UIKind.Web });
      const trash = mode === 'trash' ? (p: string) => Promise.resolve(vscode.workspace.fs.delete(vscode.Uri.file(p), { useTrash: true, recursive: false })) : undefined;
      const result = await catalog.executeClean(plan, trash ? { trash } : {});
      const message = `Automatic cleanup: ${cleanResultMessage(result, mode === 'trash')}`;
      this.log.info(message);
      vscode.window.setStatusBarMessage(`Spillway: ${message}`, 10_000);
    } catch (err) {
      this.log.error(`automatic cleanup: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.running = false;
    }
  }
}
