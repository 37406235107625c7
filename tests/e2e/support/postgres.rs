//! The test PostgreSQL server: the same one the store's unit tests use (one per test binary,
//! a fresh database per test), included from the host's source so it has one home.

#[path = "../../../host/src/state/postgres/test_server.rs"]
mod test_server;

pub use test_server::{PASSWORD, TestServer};
