/** An async mutex whose waiters give up at a deadline; the lock passes straight to the next waiter. */
export class Mutex {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  /** Resolves once the caller holds the mutex; rejects with `onTimeout()` after `timeoutMs`. */
  acquire(timeoutMs: number, onTimeout: () => Error): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(onTimeout());
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Hands the mutex to the oldest waiter, or frees it. */
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }

  /** True when nobody holds or waits for it (the owner may then forget it). */
  get idle(): boolean {
    return !this.held && this.waiters.length === 0;
  }
}
