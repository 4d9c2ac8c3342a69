/**
 * The process-wide budget of kernel bytes in flight (B, K-2): what all local kernels together make
 * the runtime hold of the messages they sent it. Each kernel connection has an account; every
 * message taken from one of its sockets is charged to it. When the sum over all accounts passes
 * the budget, the account holding the most is cut (its owner closes that kernel's sockets and
 * treats the kernel as lost), never one that holds little: a session whose kernel floods pays for
 * its flood, the quiet ones beside it go on.
 *
 * What an account holds, per socket: the messages taken from it whose frames are still alive (a
 * received frame is ZeroMQ's own memory until the collector frees it; credited back then), and
 * what ZeroMQ still queues on it, estimated from the message just taken: while more waits, the
 * socket holds up to KERNEL_RECEIVE_HIGH_WATER_MARK + 1 more (the queue and the one its reader
 * holds), counted at that message's size; nothing once the socket's queue was found empty.
 */
import { KERNEL_RECEIVE_HIGH_WATER_MARK, MAX_KERNEL_BYTES_IN_FLIGHT } from "./limits.js";

/** One kernel connection's share: what its sockets hold now. */
export class BudgetAccount {
  /** Bytes of taken messages whose frames are still alive. */
  private alive = 0;
  /** ZeroMQ's queue on each socket, estimated (see the module's comment). */
  private readonly queued = new Map<string, number>();
  private open = true;

  constructor(private readonly budget: KernelByteBudget, readonly name: string, private readonly onCut: (reason: string) => void) {}

  /** What this connection holds now, in bytes. */
  get held(): number {
    let queued = 0;
    for (const bytes of this.queued.values()) queued += bytes;
    return this.alive + queued;
  }

  /** Whether the budget cut this account (or its owner closed it). */
  get closed(): boolean {
    return !this.open;
  }

  /**
   * Charges a message of `bytes` just taken from `socket`, whose frames are `frames`, with `more`
   * when the socket has more waiting; returns false when the charge made the budget cut this account.
   */
  take(socket: string, frames: object, bytes: number, more: boolean): boolean {
    if (!this.open) return false;
    this.queued.set(socket, more ? bytes * (KERNEL_RECEIVE_HIGH_WATER_MARK + 1) : 0);
    this.alive += bytes;
    this.budget.register(frames, this, bytes);
    this.budget.settle();
    return this.open;
  }

  /** The socket's queue was found empty: ZeroMQ holds nothing more of it. */
  drained(socket: string): void {
    this.queued.set(socket, 0);
  }

  /** Ends the account: its connection is closed, so nothing it held counts any more. Idempotent. */
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.budget.remove(this);
  }

  /** The collector freed the frames of a message charged `bytes`. */
  freed(bytes: number): void {
    this.alive -= bytes;
  }

  /** The budget cuts this account: closed first, then its owner is told why. */
  cut(reason: string): void {
    this.close();
    this.onCut(reason);
  }
}

export class KernelByteBudget {
  private readonly accounts = new Set<BudgetAccount>();
  private readonly collector = new FinalizationRegistry<{ readonly account: BudgetAccount; readonly bytes: number }>(
    ({ account, bytes }) => account.freed(bytes),
  );

  /** `limit` bytes for all accounts together; `limitName` names it in the reason a cut account gets. */
  constructor(readonly limit: number, private readonly limitName: string) {}

  /** Opens an account for one kernel connection; `onCut` hears why the budget cut it. */
  open(name: string, onCut: (reason: string) => void): BudgetAccount {
    const account = new BudgetAccount(this, name, onCut);
    this.accounts.add(account);
    return account;
  }

  /** What all open accounts hold now, in bytes. */
  get held(): number {
    let sum = 0;
    for (const account of this.accounts) sum += account.held;
    return sum;
  }

  /** @internal Credits `bytes` back to `account` once `frames` is collected. */
  register(frames: object, account: BudgetAccount, bytes: number): void {
    this.collector.register(frames, { account, bytes });
  }

  /** @internal */
  remove(account: BudgetAccount): void {
    this.accounts.delete(account);
  }

  /** @internal Cuts the heaviest account while all of them together hold more than the limit. */
  settle(): void {
    for (let held = this.held; held > this.limit; held = this.held) {
      let heaviest: BudgetAccount | undefined;
      for (const account of this.accounts) if (heaviest === undefined || account.held > heaviest.held) heaviest = account;
      if (heaviest === undefined) return;
      const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
      heaviest.cut(
        `the kernel's messages took the runtime past ${this.limitName} (${mib(this.limit)}) for all kernels together: ` +
          `${mib(held)} held, ${mib(heaviest.held)} of it from this kernel, the most of any; albedo cut its connection`,
      );
    }
  }
}

/** The one budget of this process: every local kernel connection opens its account here. */
export const kernelBytesInFlight = new KernelByteBudget(MAX_KERNEL_BYTES_IN_FLIGHT, "MAX_KERNEL_BYTES_IN_FLIGHT");
