import type Database from "better-sqlite3";

/**
 * Migrations as code: entry i brings the database from version i to i + 1. Append only; never
 * edit an entry that has shipped.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE receipts (
    operation_id   TEXT PRIMARY KEY,
    session_id     TEXT NOT NULL,
    request_key    TEXT NOT NULL,
    status         INTEGER NOT NULL,
    response_json  TEXT NOT NULL,
    id_time_ms     INTEGER NOT NULL,
    admitted_at_ms INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX receipts_by_id_time ON receipts (id_time_ms);

  CREATE TABLE inputs (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    operation_id   TEXT NOT NULL UNIQUE,
    session_id     TEXT NOT NULL,
    input_json     TEXT NOT NULL,
    admitted_at_ms INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE turns (
    turn_id        TEXT PRIMARY KEY,
    operation_id   TEXT NOT NULL UNIQUE REFERENCES inputs (operation_id),
    session_id     TEXT NOT NULL,
    seq            INTEGER NOT NULL,
    visible_text   TEXT NOT NULL,
    model_input    TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('pending', 'running', 'committed', 'cancelled', 'abandoned')),
    outcome_json   TEXT,
    created_at_ms  INTEGER NOT NULL,
    updated_at_ms  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX turns_by_session_state ON turns (session_id, state, seq);
  `,
  // 2: a receipt is the admission record, not an HTTP answer (the daemon picks the status), and a
  // built-in's reply is stored as the JSON value it is, no longer as JSON text inside a string.
  `
  ALTER TABLE receipts DROP COLUMN status;
  ALTER TABLE receipts RENAME COLUMN response_json TO receipt_json;
  UPDATE turns SET outcome_json = json_set(outcome_json, '$.reply', json(json_extract(outcome_json, '$.reply')))
    WHERE json_extract(outcome_json, '$.state') = 'committed'
      AND json_type(outcome_json, '$.reply') = 'text'
      AND json_valid(json_extract(outcome_json, '$.reply'));
  `,
  // 3: the transcript (O-9) and each session's conversation, kept with the receipts so a daemon
  // restart keeps them.
  `
  CREATE TABLE transcript (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    turn_id    TEXT NOT NULL,
    row_json   TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
  ) STRICT;
  CREATE TABLE conversations (
    session_id    TEXT PRIMARY KEY,
    state_json    TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL
  ) STRICT;
  `,
  // 4: a user activation is stored once, with its turn, as the command and the activation; the
  // model input is made from it when read (a turn without one gives the model its visible text,
  // which model_input always repeated). The command is taken from the block the model was given.
  `
  ALTER TABLE turns ADD COLUMN activation_json TEXT;
  UPDATE turns SET activation_json = (
    SELECT json_object('command', json_extract(turns.model_input, '$.skill_activation.command'), 'activation', json(json_extract(inputs.input_json, '$.activation')))
      FROM inputs
     WHERE inputs.operation_id = turns.operation_id AND json_valid(inputs.input_json) AND json_type(inputs.input_json, '$.activation') = 'object'
  ) WHERE json_valid(model_input) AND json_type(model_input, '$.skill_activation.command') = 'text';
  UPDATE inputs SET input_json = json_remove(input_json, '$.activation') WHERE json_valid(input_json) AND json_type(input_json, '$.activation') IS NOT NULL;
  ALTER TABLE turns DROP COLUMN model_input;
  `,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the database to SCHEMA_VERSION in one immediate transaction; returns the version found
 * before. Throws when the file was written by a newer albedo (a higher version than this code knows).
 */
export function migrate(db: Database.Database): number {
  db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL) STRICT");
  return db
    .transaction((): number => {
      const row = db.prepare("SELECT version FROM schema_version").get() as { version: number } | undefined;
      const found = row?.version ?? 0;
      if (found > SCHEMA_VERSION) {
        throw new Error(`operations database has schema version ${found}; this albedo knows only up to ${SCHEMA_VERSION}`);
      }
      for (let version = found; version < SCHEMA_VERSION; version += 1) db.exec(MIGRATIONS[version]!);
      if (row === undefined) db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(SCHEMA_VERSION);
      else db.prepare("UPDATE schema_version SET version = ?").run(SCHEMA_VERSION);
      return found;
    })
    .immediate();
}
