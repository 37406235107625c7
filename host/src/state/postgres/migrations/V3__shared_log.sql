-- What hosts sharing this database tell each other (see `state/shared.rs`): each session's
-- events, numbered within the session (the newest kept), the views as the last event that
-- changed one left them, and the asks waiting on a host with the answers given elsewhere.
CREATE TABLE session_events (
    session_id TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE session_event_views (
    session_id TEXT PRIMARY KEY,
    seq        BIGINT NOT NULL,
    views      TEXT NOT NULL
);
CREATE TABLE pending_asks (
    session_id TEXT NOT NULL,
    id         TEXT NOT NULL,
    answer     TEXT,
    asked_at   BIGINT NOT NULL,
    PRIMARY KEY (session_id, id)
);
