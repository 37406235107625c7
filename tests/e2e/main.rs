//! End-to-end tests: real plugin components built from plugins/, real HTTP to a local fake
//! model server, real SQLite in a temporary folder, and the real binary where it matters.

mod support;

mod agent_mode;
mod anthropic;
mod approvals;
mod caps;
mod carry;
mod cli;
mod compaction;
mod compile_cache;
mod config_errors;
mod context_window;
mod contract_versions;
mod crash;
mod custom_mode;
mod declared_tools;
mod endpoint_check;
mod event_schema;
mod first_run;
mod fs_tools;
mod fuzz;
mod hook_filter;
mod hostile;
mod hygiene;
mod layering;
mod lease;
mod llama_server_replay;
mod mcp;
mod model_faults;
mod openai_compat;
mod permissions;
mod plugin_model;
mod reload;
mod reply_ends;
mod reuse;
mod round_trip;
mod sandbox;
mod secrets;
mod shell;
mod shell_sandbox;
mod source_plugin;
mod stock_config;
mod swap;
mod todo;
mod todo_write;
