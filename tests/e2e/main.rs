//! End-to-end tests: real plugin components built from plugins/, real HTTP to a local fake
//! model server, real SQLite in a temporary folder, and the real binary where it matters.

// Test code, though not in a #[cfg(test)] module, which is all clippy.toml's allowance reaches.
#![allow(clippy::unwrap_used)]

mod support;

mod acp;
mod acp_clients;
mod acp_edits;
mod acp_lines;
mod acp_sessions;
mod agent_mode;
mod anthropic;
mod approvals;
mod build_sandbox;
mod caps;
mod carry;
mod cli;
mod compaction;
mod compile_cache;
mod config_errors;
mod console_pty;
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
mod goal;
mod grants;
mod hook_filter;
mod hostile;
mod hygiene;
mod judge_grants;
mod judge_python;
mod judge_typescript;
mod layering;
mod lease;
mod llama_server_replay;
mod mcp;
mod model_faults;
mod openai_compat;
mod permissions;
mod plugin_model;
mod postgres_store;
mod reload;
mod reply_ends;
mod reuse;
mod reviewer;
mod round_trip;
mod sandbox;
mod sandbox_languages;
mod secrets;
mod serve;
mod serve_edge;
mod serve_first_run;
mod serve_hosts;
mod serve_metrics;
mod serve_page;
mod serve_principals;
mod server_code;
mod shell;
mod shell_sandbox;
mod skills;
mod source_plugin;
mod stock_config;
mod swap;
mod telemetry;
mod todo;
mod todo_write;
mod turn_budgets;
mod views;
