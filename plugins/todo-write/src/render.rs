//! Text views of the list: the tool's answer, `/todos`, reminders and the loop's message.

use crate::todos::{Status, Todo};

/// One line per item (`[x]` done, `[>]` in progress with its active form, `[ ]` pending).
pub fn lines<'a>(todos: impl IntoIterator<Item = &'a Todo>) -> Vec<String> {
    todos
        .into_iter()
        .map(|todo| match todo.status {
            Status::Completed => format!("[x] {}", todo.content),
            Status::InProgress => format!("[>] {} <- {}", todo.content, todo.active_form),
            Status::Pending => format!("[ ] {}", todo.content),
        })
        .collect()
}

/// The whole list with a `(k/n completed)` footer.
pub fn list(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "(no todos)".to_owned();
    }
    let done = todos.iter().filter(|t| t.status == Status::Completed).count();
    let mut lines = lines(todos);
    lines.push(format!("({done}/{} completed)", todos.len()));
    lines.join("\n")
}
