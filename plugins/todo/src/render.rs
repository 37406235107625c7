//! Text views of the list: the injected message, the loop's reminder, and the checklist
//! `/todos` answers with.

use crate::config::Config;
use crate::item::Item;

/// Heading of the message injected before each model call.
pub const HEADING: &str = "### Current todo list";

/// One item as a line, through the configured template or the built-in form.
pub fn item_line(config: &Config, item: &Item) -> String {
    let status = if item.is_complete { "done" } else { "open" };
    match &config.item_template {
        Some(template) => template
            .replace("{id}", &item.id.to_string())
            .replace("{status}", status)
            .replace("{title}", &item.title)
            .replace("{description}", item.description.as_deref().unwrap_or("")),
        None => match &item.description {
            Some(description) => format!("- {} [{status}] {}: {description}", item.id, item.title),
            None => format!("- {} [{status}] {}", item.id, item.title),
        },
    }
}

/// The items as lines, or `- none yet` for an empty list.
pub fn lines<'a>(config: &Config, items: impl IntoIterator<Item = &'a Item>) -> String {
    let lines: Vec<String> = items.into_iter().map(|item| item_line(config, item)).collect();
    if lines.is_empty() { "- none yet".to_owned() } else { lines.join("\n") }
}

/// The whole injected message.
pub fn list_message(config: &Config, items: &[Item]) -> String {
    format!("{HEADING}\n{}", lines(config, items))
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
