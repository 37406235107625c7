-- What kind of process holds a lease (`HolderRole` in `state/lease.rs`: a console, a
-- `--prompt` run, `serve`, `acp`; empty when not said), so that a process refused the session
-- is told what will free it. Holders of older versions write none.
ALTER TABLE session_leases
    ADD COLUMN role TEXT NOT NULL DEFAULT '';
