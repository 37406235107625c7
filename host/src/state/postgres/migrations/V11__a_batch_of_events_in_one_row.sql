-- A batch of a session's events is one row, its kinds and bodies arrays in the order they
-- came, numbered `first_seq` to `last_seq`: a relay's batch of a few sessions then inserts a
-- row and an index entry for each session, not for each event (a streamed reply is many
-- small events), and the keep drops whole batches. A batch is kept or dropped whole: the
-- log keeps at least the newest `p_keep` events of a session, and reads from the first
-- event of the oldest batch kept.
CREATE TABLE session_event_batches (
    session_id TEXT   NOT NULL,
    last_seq   BIGINT NOT NULL,
    first_seq  BIGINT NOT NULL,
    kinds      TEXT[] NOT NULL,
    bodies     TEXT[] NOT NULL,
    PRIMARY KEY (session_id, last_seq)
) WITH (toast_tuple_target = 8160); -- a batch of small events stays in its page, uncompressed

INSERT INTO session_event_batches (session_id, last_seq, first_seq, kinds, bodies)
SELECT session_id, seq, seq, ARRAY[kind], ARRAY[body] FROM session_events;
DROP TABLE session_events;

-- Hosts of an earlier release still running read, and delete, the log event by event.
CREATE VIEW session_events AS
SELECT b.session_id, b.first_seq + e.n - 1 AS seq, e.kind, e.body
FROM session_event_batches b, unnest(b.kinds, b.bodies) WITH ORDINALITY AS e(kind, body, n);

CREATE FUNCTION agent_host_session_events_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM session_event_batches
    WHERE session_id = OLD.session_id AND last_seq >= OLD.seq AND first_seq <= OLD.seq;
    RETURN OLD;
END
$$;
CREATE TRIGGER session_events_deleted INSTEAD OF DELETE ON session_events FOR EACH ROW
    EXECUTE FUNCTION agent_host_session_events_deleted();

-- As migration 9's, but for the one row per batch.
CREATE OR REPLACE FUNCTION agent_host_append_batches(
    p_sessions    TEXT[],
    p_tokens      TEXT[],
    p_generations BIGINT[],
    p_views       TEXT[],
    p_batches     INTEGER[],
    p_kinds       TEXT[],
    p_bodies      TEXT[],
    p_keep        BIGINT,
    p_channel     TEXT
) RETURNS BIGINT[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    session  TEXT;
    priors   BIGINT[];
    moved    TEXT[];
    newest   BIGINT[];
    furthest BIGINT;
BEGIN
    FOREACH session IN ARRAY p_sessions LOOP
        PERFORM pg_advisory_xact_lock(hashtext(session));
        PERFORM pg_advisory_xact_lock_shared(agent_host_lease_lock_class(), hashtext(session));
    END LOOP;
    SELECT array_agg(
        CASE WHEN b.token IS NULL OR EXISTS (
            SELECT 1 FROM session_leases l
            WHERE l.session_id = b.session AND l.token = b.token AND l.generation = b.generation
                AND l.expires_at <> 0)
        THEN (SELECT COALESCE(MAX(e.last_seq), 0) FROM session_event_batches e WHERE e.session_id = b.session)
        END ORDER BY b.at)
    INTO priors
    FROM unnest(p_sessions, p_tokens, p_generations) WITH ORDINALITY AS b(session, token, generation, at);
    WITH inserted AS (
        INSERT INTO session_event_batches (session_id, last_seq, first_seq, kinds, bodies)
        SELECT p_sessions[e.batch], priors[e.batch] + count(*), priors[e.batch] + 1,
            array_agg(e.kind ORDER BY e.n), array_agg(e.body ORDER BY e.n)
        FROM unnest(p_batches, p_kinds, p_bodies) WITH ORDINALITY AS e(batch, kind, body, n)
        WHERE priors[e.batch] IS NOT NULL
        GROUP BY e.batch
        RETURNING session_id, last_seq
    )
    SELECT array_agg(session_id), array_agg(last_seq), MAX(last_seq) INTO moved, newest, furthest
    FROM inserted;
    IF moved IS NULL THEN
        RETURN priors;
    END IF;
    IF array_remove(p_views, NULL) <> '{}' THEN
        INSERT INTO session_event_views (session_id, seq, views)
        SELECT m.session, m.seq, p_views[array_position(p_sessions, m.session)]
        FROM unnest(moved, newest) AS m(session, seq)
        WHERE p_views[array_position(p_sessions, m.session)] IS NOT NULL
        ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, views = excluded.views;
    END IF;
    IF furthest > p_keep THEN
        DELETE FROM session_event_batches
        USING unnest(moved, newest) AS m(session, seq)
        WHERE session_event_batches.session_id = m.session
            AND session_event_batches.last_seq <= m.seq - p_keep;
    END IF;
    PERFORM pg_notify(p_channel, m.seq::TEXT || ' ' || m.session) FROM unnest(moved, newest) AS m(session, seq);
    RETURN priors;
END
$$;

-- One session's batch, as migration 7's function appended it, for hosts of an earlier
-- release still running: now the batches' function with one batch.
CREATE OR REPLACE FUNCTION agent_host_append_events(
    p_session    TEXT,
    p_token      TEXT,
    p_generation BIGINT,
    p_kinds      TEXT[],
    p_bodies     TEXT[],
    p_views      TEXT,
    p_keep       BIGINT,
    p_channel    TEXT
) RETURNS BIGINT LANGUAGE sql AS $$
    SELECT (agent_host_append_batches(
        ARRAY[p_session], ARRAY[p_token], ARRAY[p_generation], ARRAY[p_views],
        array_fill(1, ARRAY[cardinality(p_kinds)]), p_kinds, p_bodies, p_keep, p_channel))[1]
$$;
