-- A bag's row updated by a step fires no trigger. Any AFTER UPDATE trigger on `state`,
-- whatever its WHEN, cost every step's upsert about as much again as the upsert's own work
-- (BENCHMARKS.md), though only an owner row's change ever moved a count. Every binary's
-- step is this function, and no other statement updates a bag's row, so the step itself now
-- keeps the owners' counts and table when it gives a session to another owner; an owner row
-- inserted or deleted (a copy, a deletion, a step removing the key) keeps its triggers.
DROP TRIGGER owner_row_changed_from ON state;
DROP TRIGGER owner_row_changed_to ON state;

-- Session `p_session` given from owner `p_from` to `p_to` (as migration 10's triggers
-- counted a changed owner row: removed, then added).
CREATE FUNCTION agent_host_owner_moved(p_session TEXT, p_from TEXT, p_to TEXT) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sessions_per_owner SET sessions = sessions - 1 WHERE owner = p_from;
    DELETE FROM session_owners WHERE session_id = p_session AND owner = p_from;
    INSERT INTO sessions_per_owner (owner, sessions) VALUES (p_to, 1)
    ON CONFLICT (owner) DO UPDATE SET sessions = sessions_per_owner.sessions + 1;
    INSERT INTO session_owners (session_id, owner) VALUES (p_session, p_to)
    ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner;
END
$$;

-- As migration 9's, and an owner row's change counted (above).
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
    written    BIGINT[];
    taken      BIGINT;
    owned_by   TEXT;
    given_to   TEXT;
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
        IF 'agent-host.serve' = ANY (p_namespaces) THEN
            SELECT s.value, c.value INTO owned_by, given_to
            FROM state s, unnest(p_namespaces, p_keys, p_values) AS c(namespace, key, value)
            WHERE s.session_id = p_session AND s.namespace = 'agent-host.serve' AND s.key = 'owner'
                AND c.namespace = s.namespace AND c.key = s.key AND c.value <> s.value;
            IF FOUND THEN
                PERFORM agent_host_owner_moved(p_session, owned_by, given_to);
            END IF;
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
