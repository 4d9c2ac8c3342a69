/** How much a log entry matters; a log may drop the lower levels. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** The one logger shape every part is handed: it never throws, and `data` is a flat record of facts. */
export type Log = (level: LogLevel, message: string, data?: Readonly<Record<string, unknown>>) => void;
