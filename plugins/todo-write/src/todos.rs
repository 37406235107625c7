//! The snapshot list (namespace `todo-write`, key `todos`) and the checks a write must pass.
//! A write replaces the whole list; a write that fails a check changes nothing.

use std::collections::HashSet;

use agent_host_sdk::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    InProgress,
    Completed,
}

/// One stored item.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    pub id: String,
    pub content: String,
    pub status: Status,
    pub active_form: String,
}

/// One item as the model sends it; the id is optional for new items.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TodoInput {
    /// Keep an item's id when you resend it.
    id: Option<String>,
    /// What to do, e.g. "Run the tests".
    content: String,
    status: Status,
    /// The step as ongoing work, e.g. "Running the tests".
    active_form: String,
}

/// Reads the stored list.
pub fn load() -> Result<Vec<Todo>, String> {
    state::get_kept_or_default("todos")
}

/// Checks a snapshot and turns it into stored items, giving new items fresh ids (never one
/// the snapshot gives another item). At most one item may be in progress. Errors name the
/// offending item by position and content.
pub fn validate(input: Vec<TodoInput>, max_items: usize) -> Result<Vec<Todo>, String> {
    if input.len() > max_items {
        return Err(format!("the list has {} items; at most {max_items} are allowed", input.len()));
    }
    let in_progress: Vec<usize> = input
        .iter()
        .enumerate()
        .filter(|(_, item)| item.status == Status::InProgress)
        .map(|(i, _)| i + 1)
        .collect();
    if in_progress.len() > 1 {
        let items: Vec<String> = in_progress.iter().map(|i| i.to_string()).collect();
        return Err(format!(
            "items {} are all in_progress; keep one item in_progress at a time and mark the others \
             pending or completed",
            items.join(", ")
        ));
    }
    let mut next_id: u64 = state::get("next_id")?.unwrap_or(1);
    // A fresh id never takes one the snapshot gives another item.
    let given: HashSet<String> = input
        .iter()
        .filter_map(|item| item.id.as_deref().map(str::trim).filter(|id| !id.is_empty()))
        .map(str::to_owned)
        .collect();
    let mut seen = HashSet::new();
    let mut todos = Vec::with_capacity(input.len());
    for (index, item) in input.into_iter().enumerate() {
        let content = item.content.trim().to_owned();
        let name = format!("item {} ({content:?})", index + 1);
        if content.is_empty() {
            return Err(format!("item {}: `content` must not be empty", index + 1));
        }
        let active_form = item.active_form.trim().to_owned();
        if active_form.is_empty() {
            return Err(format!("{name}: `activeForm` must not be empty"));
        }
        let id = match item.id.map(|id| id.trim().to_owned()).filter(|id| !id.is_empty()) {
            Some(id) => id,
            None => {
                while given.contains(&next_id.to_string()) {
                    next_id += 1;
                }
                let id = next_id.to_string();
                next_id += 1;
                id
            }
        };
        if !seen.insert(id.clone()) {
            return Err(format!("{name}: the id `{id}` is used twice"));
        }
        todos.push(Todo { id, content, status: item.status, active_form });
    }
    state::set("next_id", &next_id)?;
    Ok(todos)
}
