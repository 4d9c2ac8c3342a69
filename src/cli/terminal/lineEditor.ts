/**
 * What the console and the chat add to Node's readline so its line editing behaves as a terminal
 * user expects: Ctrl-C at the prompt drops the typed line, and a read holding only Tabs (a fast
 * double tap) completes instead of inserting a literal Tab.
 */
import type { Interface } from "node:readline";

/** A completion as readline takes it: whole-line candidates and the text they complete. */
export type Completion = [string[], string];

/** readline's own line state: the text typed, the cursor, and whether the Tab being handled completes. */
interface LineState {
  line: string;
  cursor: number;
  isCompletionEnabled: boolean;
}

const stateOf = (rl: Interface): LineState => rl as unknown as LineState;

/** Drops the line typed so far, as Python's REPL does on Ctrl-C; the next prompt starts empty. */
export function discardLine(rl: Interface): void {
  const state = stateOf(rl);
  state.line = "";
  state.cursor = 0;
}

/**
 * A readline completer that runs one completion at a time, each on the line as it stands when it
 * starts (from `rl`): two Tabs handled in one read would otherwise both complete the text they were
 * typed after, and the second would insert the completion again.
 */
export function serialCompleter(rl: () => Interface | undefined, complete: (line: string) => Promise<Completion>) {
  let last: Promise<unknown> = Promise.resolve();
  return (typed: string, callback: (error: null, result: Completion) => void): void => {
    const next = last.then(async () => {
      const current = rl();
      const line = current === undefined ? typed : current.line.slice(0, current.cursor);
      callback(null, await complete(line).catch((): Completion => [[], line]));
    });
    last = next;
  };
}

/**
 * Makes every Tab of a read that holds only Tabs a completion. readline completes on the last
 * character of a read alone, so that a Tab inside pasted text stays text; a double tap arrives as
 * one read of two Tabs and would put a Tab character into the line.
 */
export function completeTabOnlyReads(rl: Interface, input: NodeJS.ReadableStream): void {
  let tabsOnly = false;
  input.prependListener("data", (chunk: Buffer | string) => void (tabsOnly = /^\t+$/.test(chunk.toString())));
  input.prependListener("keypress", (_text: string, key: { name?: string } | undefined) => {
    if (tabsOnly && key?.name === "tab") stateOf(rl).isCompletionEnabled = true;
  });
}
