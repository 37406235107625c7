//! What front ends show of the list: a checklist (id `todos`), one entry per item, with the
//! item's `activeForm` as the entry's active form. An empty list is an empty checklist, so
//! the pane stays put between lists.

use agent_host_sdk::prelude::*;
use agent_host_sdk::view::entry;

use crate::config::Config;
use crate::todos::{self, Status, Todo};

/// The widget's id and heading.
const ID: &str = "todos";
const LABEL: &str = "Todos";

/// The `view` hook. A list that cannot be read shows why, in the checklist's place.
pub fn view(_ctx: &Context<Config>) -> Vec<Widget> {
    match todos::load() {
        Ok(todos) => vec![checklist(&todos).into()],
        Err(error) => vec![Text::new(ID, LABEL, &format!("cannot read the todo list: {error}")).into()],
    }
}

fn checklist(todos: &[Todo]) -> Checklist {
    todos.iter().fold(Checklist::new(ID, LABEL), |list, todo| {
        let state = match todo.status {
            Status::Pending => EntryState::Pending,
            Status::InProgress => EntryState::InProgress,
            Status::Completed => EntryState::Completed,
        };
        list.with(entry(&todo.content, state).active_form(&todo.active_form))
    })
}
