-- One step of a session in one statement (`state/postgres/step.rs`), so that a step costs a
-- host one round trip and the server one statement: the lease checked under a row lock, the
-- messages, the state bag's changes, the session's row and a compaction view, all of it or
-- none (the call is its own transaction). A refusal is an error whose SQLSTATE the store turns
-- back into its typed errors, its message naming what was refused: AH001 the lease is not (any
-- more) the writer's taking, AH002 a message position is taken (the position), AH003 a view
-- generation is taken (the generation).
CREATE FUNCTION agent_host_commit_step(
    p_session         TEXT,
    p_token           TEXT,     -- the writer's lease (holder token), NULL for none to check
    p_generation      BIGINT,   -- ... and its taking
    p_first_seq       BIGINT,   -- the position of the first message
    p_bodies          TEXT[],   -- the messages, from p_first_seq on
    p_usages          TEXT[],   -- what each one's model call used, NULL for none
    p_prompts         TEXT[],   -- a user message's start, for listings; NULL for others
    p_namespaces      TEXT[],   -- the bag's changes: namespace, key, value (NULL: removed)
    p_keys            TEXT[],
    p_values          TEXT[],
    p_touch           BOOLEAN,  -- a user message: the session's last use and model calls written
    p_now             BIGINT,   -- ms since the epoch, the host's clock
    p_model_calls     BIGINT,
    p_view_generation BIGINT,   -- a compaction's new view, NULL for none
    p_view_covers     BIGINT,
    p_view_entries    TEXT,
    p_summary_ids     BIGINT[], -- the summaries it adds
    p_summary_bodies  TEXT[]
) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    written BIGINT[];
    taken   BIGINT;
BEGIN
    IF p_token IS NOT NULL THEN
        -- Share-locked until the step commits: a taker waits for it, and then takes a lease
        -- whose next step this one cannot be. Shared, so that the relay's batch of this
        -- session's events, which checks the same lease, neither waits for the step nor
        -- holds it up.
        PERFORM 1 FROM session_leases
        WHERE session_id = p_session AND token = p_token AND generation = p_generation
            AND expires_at <> 0
        FOR SHARE;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'AH001', MESSAGE = p_session;
        END IF;
    END IF;
    IF cardinality(p_bodies) > 0 THEN
        -- A position is written once: one another writer holds fails the step.
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
        DELETE FROM state
        USING unnest(p_namespaces, p_keys, p_values) AS c(namespace, key, value)
        WHERE c.value IS NULL AND state.session_id = p_session
            AND state.namespace = c.namespace AND state.key = c.key;
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
