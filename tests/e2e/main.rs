//! End-to-end tests: real plugin components built from plugins/, real HTTP to a local fake
//! model server, real SQLite in a temporary folder, and the real binary where it matters.

mod support;

mod cli;
mod config_errors;
mod model_faults;
mod round_trip;
mod sandbox;
