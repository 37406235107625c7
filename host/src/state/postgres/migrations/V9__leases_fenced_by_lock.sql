-- A step or a batch of events checks its session's lease under a shared advisory lock on the
-- session, no longer under a row lock on the lease: a row lock writes the lease's page (and,
-- when a step and the relay's batch hold it at once, a multixact) for every step, while an
-- advisory lock lives in the server's memory. What the row lock did, the lock still does:
-- whatever change to a lease could fence a writer out takes the same lock exclusively, by a
-- trigger on the table, so that it waits for the steps and batches checking the lease it
-- replaces, and they wait for it (and then read the new lease). The trigger fires for any
-- host's statement, whichever binary wrote it. The lock's key is the two-number form
-- (`LEASES`, the session's hash), which never meets the one-number keys the batches of events
-- and the migrations lock under.
--
-- The relay's batches of many sessions become one call (`agent_host_append_batches`): the
-- statements of a batch run once for all of them, not once for each.

CREATE FUNCTION agent_host_lease_lock_class() RETURNS INTEGER LANGUAGE sql IMMUTABLE AS
$$ SELECT 1634233452 $$; -- 'ag' 'hl': agent-host lease

CREATE FUNCTION agent_host_lease_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(agent_host_lease_lock_class(), hashtext(OLD.session_id));
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

-- Renewing a lease (a new expiry, the same holder and taking) fences nobody out and waits
-- for nobody; taking it from another holder or in a new taking, letting it go, and deleting
-- it do.
CREATE TRIGGER lease_replaced BEFORE UPDATE ON session_leases FOR EACH ROW
    WHEN (OLD.expires_at <> 0 AND (NEW.token <> OLD.token OR NEW.generation <> OLD.generation
                                   OR NEW.expires_at = 0 OR NEW.session_id <> OLD.session_id))
    EXECUTE FUNCTION agent_host_lease_changed();
CREATE TRIGGER lease_deleted BEFORE DELETE ON session_leases FOR EACH ROW
    WHEN (OLD.expires_at <> 0)
    EXECUTE FUNCTION agent_host_lease_changed();

-- As migration 5's, but for the lease's check (above) and a bag's removals: the `DELETE`
-- runs only when the step removes a key (each statement costs an executor's set-up).
CREATE OR REPLACE FUNCTION agent_host_commit_step(
    p_session         TEXT,
    p_token           TEXT,
    p_generation      BIGINT,
    p_first_seq       BIGINT,
    p_bodies          TEXT[],
    p_usages          TEXT[],
    p_prompts         TEXT[],
    p_namespaces      TEXT[],
    p_keys            TEXT[],
    p_values          TEXT[],
    p_touch           BOOLEAN,
    p_now             BIGINT,
    p_model_calls     BIGINT,
    p_view_generation BIGINT,
    p_view_covers     BIGINT,
    p_view_entries    TEXT,
    p_summary_ids     BIGINT[],
    p_summary_bodies  TEXT[]
) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    written BIGINT[];
    taken   BIGINT;
BEGIN
    IF p_token IS NOT NULL THEN
        -- Held until the step commits: a taker waits for it, and then takes a lease whose
        -- next step this one cannot be. Shared, so that the relay's batch of this session's
        -- events, which checks the same lease, neither waits for the step nor holds it up.
        -- Taken before the lease is read: the read's snapshot is then no older than any
        -- taking that got the lock first.
        PERFORM pg_advisory_xact_lock_shared(agent_host_lease_lock_class(), hashtext(p_session));
        PERFORM 1 FROM session_leases
        WHERE session_id = p_session AND token = p_token AND generation = p_generation
            AND expires_at <> 0;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'AH001', MESSAGE = p_session;
        END IF;
    END IF;
    IF cardinality(p_bodies) > 0 THEN
        WITH inserted AS (
            INSERT INTO messages (session_id, seq, body, usage, prompt)
            SELECT p_session, p_first_seq + m.n - 1, m.body, m.usage, m.prompt
            FROM unnest(p_bodies, p_usages, p_prompts) WITH ORDINALITY AS m(body, usage, prompt, n)
            ON CONFLICT (session_id, seq) DO NOTHING
            RETURNING seq
        )
        SELECT array_agg(seq) INTO written FROM inserted;
        IF cardinality(written) IS DISTINCT FROM cardinality(p_bodies) THEN
            SELECT min(p_first_seq + n - 1) INTO taken
            FROM generate_series(1, cardinality(p_bodies)) AS n
            WHERE NOT (p_first_seq + n - 1 = ANY (coalesce(written, '{}')));
            RAISE EXCEPTION USING ERRCODE = 'AH002', MESSAGE = taken::text;
        END IF;
    END IF;
    IF cardinality(p_keys) > 0 THEN
        IF array_position(p_values, NULL) IS NOT NULL THEN
            DELETE FROM state
            USING unnest(p_namespaces, p_keys, p_values) AS c(namespace, key, value)
            WHERE c.value IS NULL AND state.session_id = p_session
                AND state.namespace = c.namespace AND state.key = c.key;
        END IF;
        INSERT INTO state (session_id, namespace, key, value)
        SELECT p_session, c.namespace, c.key, c.value
        FROM unnest(p_namespaces, p_keys, p_values) AS c(namespace, key, value)
        WHERE c.value IS NOT NULL
        ON CONFLICT (session_id, namespace, key) DO UPDATE SET value = excluded.value;
    END IF;
    IF p_touch THEN
        UPDATE sessions SET updated_at = p_now, model_calls = p_model_calls WHERE id = p_session;
    END IF;
    IF p_view_generation IS NOT NULL THEN
        INSERT INTO summaries (session_id, id, body)
        SELECT p_session, s.id, s.body FROM unnest(p_summary_ids, p_summary_bodies) AS s(id, body);
        INSERT INTO views (session_id, generation, covers, entries, created_at)
        VALUES (p_session, p_view_generation, p_view_covers, p_view_entries, p_now)
        ON CONFLICT (session_id, generation) DO NOTHING;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'AH003', MESSAGE = p_view_generation::text;
        END IF;
    END IF;
END
$$;

-- Many sessions' batches of events in one call, each as migration 7's function appends one:
-- numbered on from the session's newest, left out when its lease (token, generation) is no
-- longer the session's, the views kept, the oldest past `p_keep` dropped, a notice of the
-- newest number on `p_channel`. A session appears once; the caller orders them (every
-- appender locks sessions in the same order, so none waits for another in a cycle). Answers
-- each batch's number before its first event, NULL for one left out.
CREATE FUNCTION agent_host_append_batches(
    p_sessions    TEXT[],
    p_tokens      TEXT[],   -- each batch's lease (holder token), NULL for none to check
    p_generations BIGINT[], -- ... and its taking
    p_views       TEXT[],   -- the views as each batch's last event left them, NULL: unchanged
    p_batches     INTEGER[],-- each event's batch, from 1, into the arrays above
    p_kinds       TEXT[],
    p_bodies      TEXT[],
    p_keep        BIGINT,
    p_channel     TEXT
) RETURNS BIGINT[] LANGUAGE plpgsql
-- Its plans made once per connection: left to choose, the server planned the lease and
-- number query anew at every call (its generic plan's cost, estimated for arrays of any
-- length, never beat a plan for the arrays at hand), which cost more than running it.
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
        THEN (SELECT COALESCE(MAX(e.seq), 0) FROM session_events e WHERE e.session_id = b.session)
        END ORDER BY b.at)
    INTO priors
    FROM unnest(p_sessions, p_tokens, p_generations) WITH ORDINALITY AS b(session, token, generation, at);
    WITH inserted AS (
        INSERT INTO session_events (session_id, seq, kind, body)
        SELECT p_sessions[e.batch], priors[e.batch] + row_number() OVER (PARTITION BY e.batch ORDER BY e.n),
            e.kind, e.body
        FROM unnest(p_batches, p_kinds, p_bodies) WITH ORDINALITY AS e(batch, kind, body, n)
        WHERE priors[e.batch] IS NOT NULL
        RETURNING session_id, seq
    ), last AS (
        SELECT session_id, MAX(seq) AS seq FROM inserted GROUP BY session_id
    )
    SELECT array_agg(session_id), array_agg(seq), MAX(seq) INTO moved, newest, furthest FROM last;
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
    -- Only past the keep: most batches are of sessions far from it.
    IF furthest > p_keep THEN
        DELETE FROM session_events
        USING unnest(moved, newest) AS m(session, seq)
        WHERE session_events.session_id = m.session AND session_events.seq <= m.seq - p_keep;
    END IF;
    PERFORM pg_notify(p_channel, m.seq::TEXT || ' ' || m.session) FROM unnest(moved, newest) AS m(session, seq);
    RETURN priors;
END
$$;
