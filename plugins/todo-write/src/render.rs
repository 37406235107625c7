//! Text views of the list: the tool's answer, reminders, the loop's message and the
//! checklist `/todos` answers with.

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

/// The operator's view of the list: `todos k/n`, then `✓` done, `▸` in progress, `○`
/// pending per item.
pub fn checklist(todos: &[Todo]) -> String {
    let done = todos.iter().filter(|t| t.status == Status::Completed).count();
    let mut lines = vec![format!("todos {done}/{}", todos.len())];
    lines.extend(todos.iter().map(|todo| {
        let mark = match todo.status {
            Status::Completed => '✓',
            Status::InProgress => '▸',
            Status::Pending => '○',
        };
        format!("  {mark} {}", todo.content)
    }));
    lines.join("\n")
}
