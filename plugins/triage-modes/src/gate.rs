//! The gate in front of `review`: it opens only when the `todo` plugin has no open items.
//! Reading another plugin's state needs `read_state = ["todo"]` under this plugin's grants.

use agent_host_sdk::prelude::*;
use serde::Deserialize;

/// The part of a `todo` item the gate needs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TodoItem {
    title: String,
    #[serde(default)]
    is_complete: bool,
}

/// Ok when review may be entered; otherwise why not, in words the model can act on.
pub fn review_may_open() -> Result<(), String> {
    let items: Vec<TodoItem> = state::read("todo", "items")?.unwrap_or_default();
    let open: Vec<String> =
        items.into_iter().filter(|item| !item.is_complete).map(|item| format!("- {}", item.title)).collect();
    if open.is_empty() {
        return Ok(());
    }
    Err(format!(
        "review stays closed while todos are open. Finish or remove these first:\n{}",
        open.join("\n")
    ))
}
