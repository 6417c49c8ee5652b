// Disposal in one place: a store that disposes what it holds in reverse order
// of registration (later things may depend on earlier ones). No vscode import.

export interface DisposableLike {
  dispose(): unknown;
}

export class DisposableStore implements DisposableLike {
  private readonly items: DisposableLike[] = [];
  private disposed = false;

  add<T extends DisposableLike>(item: T): T {
    if (this.disposed) {
      void item.dispose();
      return item;
    }
    this.items.push(item);
    return item;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const errors: unknown[] = [];
    for (const item of this.items.splice(0).reverse()) {
      try {
        const r = item.dispose();
        if (r instanceof Promise) r.catch(() => undefined);
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length) throw new AggregateError(errors, 'Some Spillway resources failed to dispose');
  }
}

/** Base class in the manner of `_register(d)`: subclasses register what they own. */
export abstract class Disposable implements DisposableLike {
  private readonly store = new DisposableStore();

  protected register<T extends DisposableLike>(item: T): T {
    return this.store.add(item);
  }

  protected get isDisposed(): boolean {
    return this.store.isDisposed;
  }

  dispose(): void {
    this.store.dispose();
  }
}

/** Runs `fn` once per burst: the first call schedules it, later calls within `ms` join it. */
export function coalesce(fn: () => void, ms: number): { schedule(): void; dispose(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    schedule() {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        fn();
      }, ms);
    },
    dispose() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
