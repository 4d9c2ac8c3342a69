/** Removes a listener. */
export interface Disposable {
  dispose(): void;
}

/** A minimal typed event source; a throwing listener never stops delivery to the others. */
export class Emitter<T> {
  private readonly listeners = new Set<(value: T) => void>();

  constructor(private readonly onListenerError?: (error: unknown) => void) {}

  /** Registers `listener`; the returned handle removes it. */
  on(listener: (value: T) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Delivers `value` to every current listener. */
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (error) {
        this.onListenerError?.(error);
      }
    }
  }

  /** How many listeners are registered. */
  get size(): number {
    return this.listeners.size;
  }

  clear(): void {
    this.listeners.clear();
  }
}
