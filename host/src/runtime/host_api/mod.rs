//! The host side of the plugin's imports, one file per WIT interface.

mod events;
mod hook_filter;
mod log;
mod process;
mod reuse;
mod state;

impl super::bindings::types::Host for super::call::CallState {}
