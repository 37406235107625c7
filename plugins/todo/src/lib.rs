//! Placeholder: being written.
use agent_host_sdk::prelude::*;

#[derive(Default)]
struct Stub;

impl Plugin for Stub {
    fn manifest(&self) -> Manifest {
        Manifest::new("todo", env!("CARGO_PKG_VERSION"))
    }
}

export_plugin!(Stub);
