-- Who owns each session, in a table of its own kept by the owner rows' triggers (as their
-- counts are, migration 8), so that no index of `state` covers `value`: a bag's value
-- changed at a step can then be updated in place (a HOT update, with no new entry in the
-- key's index), which `state_by_owner` forbade for every row, an owner's or not. Room is left
-- in each page for those updates.
CREATE TABLE session_owners (
    session_id TEXT PRIMARY KEY,
    owner      TEXT NOT NULL
);
CREATE INDEX session_owners_by_owner ON session_owners (owner, session_id);

INSERT INTO session_owners (session_id, owner)
SELECT session_id, value FROM state WHERE namespace = 'agent-host.serve' AND key = 'owner';

-- As migration 8's, and the session's owner kept. A row changed from one owner to another
-- fires `owner_row_changed_from` (removed) before `owner_row_changed_to` (added): triggers
-- of one event fire in their names' order.
CREATE OR REPLACE FUNCTION agent_host_owner_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sessions_per_owner (owner, sessions) VALUES (NEW.value, 1)
    ON CONFLICT (owner) DO UPDATE SET sessions = sessions_per_owner.sessions + 1;
    INSERT INTO session_owners (session_id, owner) VALUES (NEW.session_id, NEW.value)
    ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION agent_host_owner_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sessions_per_owner SET sessions = sessions - 1 WHERE owner = OLD.value;
    DELETE FROM session_owners WHERE session_id = OLD.session_id AND owner = OLD.value;
    RETURN NULL;
END
$$;

DROP INDEX state_by_owner;
ALTER TABLE state SET (fillfactor = 90);
