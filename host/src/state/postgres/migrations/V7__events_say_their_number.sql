-- A batch's notice says the number of its newest event (`"NEWEST SESSION"`), so that a host
-- following the session reads the log only when it is behind that number: a host that wrote
-- the batch itself has its events already (serve's relay hands them to its streams) and
-- reads nothing. Otherwise as migration 6, which this replaces.
CREATE OR REPLACE FUNCTION agent_host_append_events(
    p_session   TEXT,
    p_token     TEXT,    -- the appending host's lease (holder token), NULL for none to check
    p_generation BIGINT, -- ... and its taking
    p_kinds     TEXT[],
    p_bodies    TEXT[],
    p_views     TEXT,    -- the views as the last event left them, NULL when unchanged
    p_keep      BIGINT,
    p_channel   TEXT
) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    lease  session_leases%ROWTYPE;
    prior  BIGINT;
    newest BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(p_session));
    IF p_token IS NOT NULL THEN
        SELECT * INTO lease FROM session_leases WHERE session_id = p_session FOR SHARE;
        IF NOT FOUND OR lease.token <> p_token OR lease.generation <> p_generation
            OR lease.expires_at = 0 THEN
            RETURN NULL;
        END IF;
    END IF;
    SELECT COALESCE(MAX(seq), 0) INTO prior FROM session_events WHERE session_id = p_session;
    INSERT INTO session_events (session_id, seq, kind, body)
    SELECT p_session, prior + e.n, e.kind, e.body
    FROM unnest(p_kinds, p_bodies) WITH ORDINALITY AS e(kind, body, n);
    newest := prior + cardinality(p_kinds);
    IF p_views IS NOT NULL THEN
        INSERT INTO session_event_views (session_id, seq, views) VALUES (p_session, newest, p_views)
        ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, views = excluded.views;
    END IF;
    -- Only past the keep: each statement costs an executor's set-up, and most batches are
    -- of sessions far from it.
    IF newest > p_keep THEN
        DELETE FROM session_events WHERE session_id = p_session AND seq <= newest - p_keep;
    END IF;
    PERFORM pg_notify(p_channel, newest::TEXT || ' ' || p_session);
    RETURN prior;
END
$$;
