-- Fencing (see `state/lease.rs`): each taking of a session's lease is numbered, a step is
-- written only under the number its writer took, and a lease let go keeps its row
-- (`expires_at` 0) so the next taking's number follows. `took_over`: the last taking was
-- from a holder that had not let go.
ALTER TABLE session_leases
    ADD COLUMN generation BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN took_over BOOLEAN NOT NULL DEFAULT FALSE;
