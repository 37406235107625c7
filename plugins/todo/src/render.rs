//! Text views of the list: the injected message, the loop's reminder, and the checklist
//! `/todos` answers with.

use crate::config::Config;
use crate::item::Item;

/// Heading of the message injected before each model call.
pub const HEADING: &str = "### Current todo list";

/// One item as a line, through the configured template or the built-in form.
pub fn item_line(config: &Config, item: &Item) -> String {
    let mut line = String::new();
    push_item_line(&mut line, config, item);
    line
}

/// [`item_line`] appended to `out`. The built-in form is pieced together rather than
/// formatted: it is written for every item before every model call.
fn push_item_line(out: &mut String, config: &Config, item: &Item) {
    let status = if item.is_complete { "done" } else { "open" };
    let id = item.id.to_string();
    match &config.item_template {
        Some(template) => out.push_str(
            &template
                .replace("{id}", &id)
                .replace("{status}", status)
                .replace("{title}", &item.title)
                .replace("{description}", item.description.as_deref().unwrap_or("")),
        ),
        None => {
            for piece in ["- ", &id, " [", status, "] ", &item.title] {
                out.push_str(piece);
            }
            if let Some(description) = &item.description {
                out.push_str(": ");
                out.push_str(description);
            }
        }
    }
}

/// The whole injected message: the heading, then the items as lines, or `- none yet` for an
/// empty list.
pub fn list_message(config: &Config, items: &[Item]) -> String {
    let mut message = format!("{HEADING}\n");
    if items.is_empty() {
        message.push_str("- none yet");
    }
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            message.push('\n');
        }
        push_item_line(&mut message, config, item);
    }
    message
}

/// The operator's view of the list: `todos k/n`, then `✓` done / `○` open per item.
pub fn checklist(items: &[Item]) -> String {
    let done = items.iter().filter(|item| item.is_complete).count();
    let mut lines = vec![format!("todos {done}/{}", items.len())];
    lines.extend(
        items.iter().map(|item| format!("  {} {}", if item.is_complete { '✓' } else { '○' }, item.title)),
    );
    lines.join("\n")
}
