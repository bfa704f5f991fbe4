/**
 * A counting semaphore: at most `size` holders at once, the others wait in arrival order.
 * A released slot is handed straight to the next waiter, so a newcomer cannot overtake it.
 */
export class Semaphore {
  private free: number;
  private readonly waiters: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  /** holders waiting for a slot now */
  get waiting(): number {
    return this.waiters.length;
  }

  acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.free += 1;
  }
}
