-- One session's batch of events appended to the shared log in one statement
-- (`state/postgres/shared.rs`), so that the relay's batch of many sessions costs one round
-- trip for all of them (pipelined in one transaction), not six per session. Writers of one
-- session take turns under an advisory lock, so each numbers after the last; a batch whose
-- lease is not (any more) the session's is left out (answers NULL), so a host that lost the
-- session writes no events either; the oldest beyond `p_keep` are dropped; followers are
-- told on `p_channel`. A written batch answers the number before its first event, so the
-- writer knows every event's number without reading them back.
CREATE FUNCTION agent_host_append_events(
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
        -- Shared, as a step's check is (V5): a taker waits for both.
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
    DELETE FROM session_events WHERE session_id = p_session AND seq <= newest - p_keep;
    PERFORM pg_notify(p_channel, p_session);
    RETURN prior;
END
$$;
