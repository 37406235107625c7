-- The tables of the SQLite store (state/schema.rs), in PostgreSQL: times in ms since the
-- epoch, messages, state values, views and usage as JSON text, exactly as written.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    model_calls BIGINT NOT NULL DEFAULT 0
);
-- Listing recent sessions reads this instead of scanning every session.
CREATE INDEX sessions_by_use ON sessions (updated_at DESC);
-- `prompt`: on a user message, the start of its text, which listings show as the session's
-- title. A column of its own: reading it out of `body` as JSON fails on a message holding
-- a NUL (`\u0000`), which PostgreSQL's text cannot hold, and would break every listing.
CREATE TABLE messages (
    session_id TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    body       TEXT NOT NULL,
    usage      TEXT,
    prompt     TEXT,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE state (
    session_id TEXT NOT NULL,
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (session_id, namespace, key)
);
-- A session's owner under `serve`: listing and counting one principal's sessions reads
-- only hers.
CREATE INDEX state_by_owner ON state (value, session_id)
    WHERE namespace = 'agent-host.serve' AND key = 'owner';
CREATE TABLE session_leases (
    session_id    TEXT PRIMARY KEY,
    token         TEXT NOT NULL,
    claim         TEXT NOT NULL,
    pid           BIGINT NOT NULL,
    host          TEXT NOT NULL,
    pid_namespace TEXT NOT NULL,
    expires_at    BIGINT NOT NULL
);
-- A holder renews all of its leases at once, by its token.
CREATE INDEX session_leases_by_token ON session_leases (token);
CREATE TABLE summaries (
    session_id TEXT NOT NULL,
    id         BIGINT NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE TABLE views (
    session_id TEXT NOT NULL,
    generation BIGINT NOT NULL,
    covers     BIGINT NOT NULL,
    entries    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (session_id, generation)
);
