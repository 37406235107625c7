//! The todo list as stored in the session bag (namespace `todo`): the items under `items`,
//! the next id under `next_id`, so ids are never reused even after removals.

use agent_host_sdk::prelude::*;
use serde::{Deserialize, Serialize};

/// One todo, in the shape every plugin and front end agrees on.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    pub id: u64,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub is_complete: bool,
}

/// The whole list, loaded from and saved to the bag.
pub struct TodoList {
    pub items: Vec<Item>,
    next_id: u64,
}

impl TodoList {
    /// Reads the list from this session's bag.
    pub fn load() -> Result<Self, String> {
        let items: Vec<Item> = state::get_kept_or_default("items")?;
        // Ids start at 1; a missing counter falls back past the highest id seen.
        let highest = items.iter().map(|item| item.id).max().unwrap_or(0);
        let next_id = state::get::<u64>("next_id")?.unwrap_or(1).max(highest + 1);
        Ok(Self { items, next_id })
    }

    /// Writes the list back and tells programs it changed (`--json`); people see the change
    /// in the plugin's view, so the event has no display.
    pub fn save(&self) -> Result<(), String> {
        let items = state::set_kept("items", &self.items)?;
        state::set("next_id", &self.next_id)?;
        events::emit_json("todos-changed", &format!(r#"{{"items":{items}}}"#), None);
        Ok(())
    }

    /// Appends an item with the next free id; the title must not be blank.
    pub fn add(&mut self, title: &str, description: Option<&str>) -> Result<Item, String> {
        let title = title.trim();
        if title.is_empty() {
            return Err("a todo needs a title that is not empty".to_owned());
        }
        let description = description.map(str::trim).filter(|d| !d.is_empty()).map(str::to_owned);
        let item = Item { id: self.next_id, title: title.to_owned(), description, is_complete: false };
        self.next_id += 1;
        self.items.push(item.clone());
        Ok(item)
    }

    /// Marks an open item complete; false when the id is unknown or already done.
    pub fn complete(&mut self, id: u64) -> bool {
        match self.items.iter_mut().find(|item| item.id == id && !item.is_complete) {
            Some(item) => {
                item.is_complete = true;
                true
            }
            None => false,
        }
    }

    /// Removes an item; false when the id is unknown.
    pub fn remove(&mut self, id: u64) -> bool {
        let before = self.items.len();
        self.items.retain(|item| item.id != id);
        self.items.len() != before
    }

    /// The items still open.
    pub fn remaining(&self) -> Vec<&Item> {
        self.items.iter().filter(|item| !item.is_complete).collect()
    }
}
