// Sessions whose blobs were all deleted while their transcript remains: the
// catalog lists only folders holding blobs, so these are remembered here (with
// the turn series read before the deletion) and stay in the tree with 0 blobs,
// their chart one click away. Forgotten once the transcript goes or the
// catalog lists the session again. No vscode import: the store is a Memento.

import type { SessionInfo, TurnSeries } from '../catalog/types';

export interface KeptSession {
  session: SessionInfo;
  series?: TurnSeries;
}

export interface KeptStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

const STATE_KEY = 'spillway.keptSessions';
/** Enough for weeks of cleaning; the oldest are forgotten first. */
const MAX_KEPT = 100;

export class KeptSessions {
  private readonly kept: Map<string, KeptSession>;

  constructor(
    private readonly store: KeptStore,
    private readonly exists: (path: string) => boolean,
  ) {
    this.kept = new Map((store.get<KeptSession[]>(STATE_KEY) ?? []).map((k) => [k.session.key, k]));
  }

  /** Remember a session emptied by a clean (only when its transcript remains). */
  async keep(session: SessionInfo, series: TurnSeries | undefined): Promise<void> {
    if (!session.transcript || !this.exists(session.transcript)) return;
    this.kept.delete(session.key);
    this.kept.set(session.key, { session: { ...session, blobs: [], bytes: 0 }, ...(series ? { series } : {}) });
    while (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    await this.save();
  }

  /** The kept sessions the catalog does not list, whose transcript is still there. */
  list(listed: ReadonlySet<string>): SessionInfo[] {
    const out: SessionInfo[] = [];
    for (const k of this.kept.values()) {
      if (listed.has(k.session.key) || !this.exists(k.session.transcript ?? '')) continue;
      out.push(k.session);
    }
    return out;
  }

  get(key: string): KeptSession | undefined {
    const k = this.kept.get(key);
    return k && this.exists(k.session.transcript ?? '') ? k : undefined;
  }

  /** Forget sessions the catalog lists again (new blobs) or whose transcript is gone. */
  async prune(listed: ReadonlySet<string>): Promise<void> {
    let changed = false;
    for (const [key, k] of this.kept) {
      if (listed.has(key) || !this.exists(k.session.transcript ?? '')) {
        this.kept.delete(key);
        changed = true;
      }
    }
    if (changed) await this.save();
  }

  private async save(): Promise<void> {
    await this.store.update(STATE_KEY, [...this.kept.values()]);
  }
}
