-- How many sessions each owner has, kept beside the owner rows of `state` (namespace
-- 'agent-host.serve', key 'owner', the value a JSON string) by triggers that fire on those
-- rows alone: `serve` checks a principal's cap on every session she creates, and counting
-- her rows took an index scan whose heap visits grew with her sessions (the rows' pages
-- change at every step, so the index alone cannot answer).
CREATE TABLE sessions_per_owner (
    owner    TEXT PRIMARY KEY,
    sessions BIGINT NOT NULL
);

INSERT INTO sessions_per_owner (owner, sessions)
SELECT value, COUNT(*) FROM state
WHERE namespace = 'agent-host.serve' AND key = 'owner'
GROUP BY value;

CREATE FUNCTION agent_host_owner_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sessions_per_owner (owner, sessions) VALUES (NEW.value, 1)
    ON CONFLICT (owner) DO UPDATE SET sessions = sessions_per_owner.sessions + 1;
    RETURN NULL;
END
$$;

CREATE FUNCTION agent_host_owner_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sessions_per_owner SET sessions = sessions - 1 WHERE owner = OLD.value;
    RETURN NULL;
END
$$;

-- Each trigger's WHEN is checked without calling its function: the bag's other rows,
-- written at every step, cost nothing here.
CREATE TRIGGER owner_row_inserted AFTER INSERT ON state FOR EACH ROW
    WHEN (NEW.namespace = 'agent-host.serve' AND NEW.key = 'owner')
    EXECUTE FUNCTION agent_host_owner_added();
CREATE TRIGGER owner_row_deleted AFTER DELETE ON state FOR EACH ROW
    WHEN (OLD.namespace = 'agent-host.serve' AND OLD.key = 'owner')
    EXECUTE FUNCTION agent_host_owner_removed();
CREATE TRIGGER owner_row_changed_from AFTER UPDATE ON state FOR EACH ROW
    WHEN (OLD.namespace = 'agent-host.serve' AND OLD.key = 'owner'
          AND (NEW.namespace, NEW.key, NEW.value) IS DISTINCT FROM (OLD.namespace, OLD.key, OLD.value))
    EXECUTE FUNCTION agent_host_owner_removed();
CREATE TRIGGER owner_row_changed_to AFTER UPDATE ON state FOR EACH ROW
    WHEN (NEW.namespace = 'agent-host.serve' AND NEW.key = 'owner'
          AND (NEW.namespace, NEW.key, NEW.value) IS DISTINCT FROM (OLD.namespace, OLD.key, OLD.value))
    EXECUTE FUNCTION agent_host_owner_added();
