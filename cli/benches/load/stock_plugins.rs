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
