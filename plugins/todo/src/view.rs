//! What front ends show of the list: a checklist (id `todos`), one entry per item, the
//! description as its detail. An empty list is an empty checklist, so the pane stays put
//! between lists.

use agent_host_sdk::prelude::*;
use agent_host_sdk::view::entry;

use crate::config::Config;
use crate::item::{Item, TodoList};

/// The widget's id and heading.
const ID: &str = "todos";
const LABEL: &str = "Todos";

/// The `view` hook. A list that cannot be read shows why, in the checklist's place.
pub fn view(_ctx: &Context<Config>) -> Vec<Widget> {
    match TodoList::load() {
        Ok(list) => vec![checklist(&list.items).into()],
        Err(error) => vec![Text::new(ID, LABEL, &format!("cannot read the todo list: {error}")).into()],
    }
}

fn checklist(items: &[Item]) -> Checklist {
    items.iter().fold(Checklist::new(ID, LABEL), |list, item| {
        let state = if item.is_complete { EntryState::Completed } else { EntryState::Pending };
        list.with(entry(&item.title, state).detail(item.description.as_deref().unwrap_or("")))
    })
}
