//! The `[[plugin]]` tables of the stock set both load benches run (todo, agent-mode,
//! permissions allowing the todo tools, fs over `workspace`), from where each was built.

use std::collections::BTreeMap;
use std::path::PathBuf;

pub fn plugin_tables(built: &BTreeMap<String, PathBuf>) -> String {
    format!(
        r#"
[[plugin]]
path = "{todo}"

[[plugin]]
path = "{mode}"

[[plugin]]
path = "{permissions}"
[plugin.config]
preset = "ask-to-mutate"
rules = [{{ tool = "todos_*", decision = "allow" }}]

[[plugin]]
path = "{fs}"
[plugin.grants.dirs]
"/workspace" = {{ host = "workspace", write = true }}
"#,
        todo = built["todo"].display(),
        mode = built["agent-mode"].display(),
        permissions = built["permissions"].display(),
        fs = built["fs"].display(),
    )
}

/// The stock set's components where the last build of the plugins workspace in `plugins`
/// left them, by plugin name; an error names the first one missing.
pub fn last_built(plugins: &std::path::Path) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    ["todo", "agent-mode", "permissions", "fs"]
        .into_iter()
        .map(|name| {
            let file =
                plugins.join("target/wasm32-wasip2/release").join(format!("{}.wasm", name.replace('-', "_")));
            anyhow::ensure!(
                file.is_file(),
                "--prebuilt: {} is missing; run the bench once without it",
                file.display()
            );
            Ok((name.to_owned(), file))
        })
        .collect()
}
