//! File tools confined to the preopened `/workspace`: `read_file` (line ranges),
//! `write_file`, `edit_file` (exact text, optionally every occurrence), `list_dir`, `glob`
//! and `grep`. Paths are relative to the workspace; `..`, other absolute paths and
//! symlinks leading out are refused with a clear error before WASI would refuse them, and
//! FIFOs, devices and sockets are refused rather than opened. The walking tools leave out
//! what their `exclude` patterns name (the permissions plugin fills it from path rules).

mod glob;
mod ops;
mod paths;

use agent_host_sdk::prelude::*;

/// A tool whose work needs only its arguments.
fn tool<A: serde::de::DeserializeOwned + JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    run: fn(A) -> Result<String, String>,
) -> Tool<NoConfig> {
    Tool::new(name, description, move |_: &Context<NoConfig>, args: A| run(args))
}

/// The plugin's declaration.
pub fn plugin() -> Plugin<NoConfig> {
    Plugin::new("fs", env!("CARGO_PKG_VERSION"))
        .tool(tool(
            "read_file",
            "Reads a text file, with line numbers; optionally only lines start_line..=end_line.",
            ops::read_file,
        ))
        .tool(
            tool(
                "write_file",
                "Writes a whole file (creating folders), replacing what was there.",
                ops::write_file,
            )
            .mutating(),
        )
        .tool(
            tool(
                "edit_file",
                "Replaces exact text in a file. old_string must occur once, unless replace_all is true.",
                ops::edit_file,
            )
            .mutating(),
        )
        .tool(tool(
            "list_dir",
            "Lists a folder (default: the workspace root); folders end with `/`.",
            ops::list_dir,
        ))
        .tool(tool(
            "glob",
            "Finds files by path pattern: `*` within a folder name, `**` across folders.",
            ops::glob,
        ))
        .tool(tool(
            "grep",
            "Finds lines containing the exact text, optionally only in files matching glob.",
            ops::grep,
        ))
        .provide(|_, contribution| {
            contribution
                .instructions("File tools work inside the workspace folder; give paths relative to it.")
                .reusable()
        })
}

agent_host_sdk::export_plugin!(plugin);
