//! A choice's command given alone (`/mode` with no value): the values it takes, read from the
//! choice's widget in the plugin's view, so the operator learns them whichever plugin shows
//! the choice — the command's own answer says only what the plugin chose to say.

use super::width::width;
use agent_host::events::{PluginView, Widget};
use agent_host::sanitize::one_line;

/// The options of the choice whose command is `line` (no value after it), the current one
/// marked; `None` when no choice in `views` is moved by that command.
pub fn listing(line: &str, views: &[PluginView]) -> Option<String> {
    let line = line.trim();
    let (label, current, options, command) =
        views.iter().flat_map(|view| &view.widgets).find_map(|widget| match widget {
            Widget::Choice { label, current, options, command: Some(command), .. }
                if command.trim() == line && !options.is_empty() =>
            {
                Some((label, current, options, command))
            }
            _ => None,
        })?;
    let widest = options.iter().map(|option| width(&one_line(&option.value))).max().unwrap_or(0);
    let mut lines =
        vec![format!("{}: {} VALUE switches it to one of", one_line(label), one_line(command.trim()))];
    for option in options {
        let mark = if current.as_deref() == Some(option.value.as_str()) { "●" } else { "○" };
        let value = one_line(&option.value);
        let mut about = Vec::new();
        if option.label != option.value {
            about.push(one_line(&option.label).into_owned());
        }
        if let Some(description) = option.description.as_deref().filter(|text| !text.trim().is_empty()) {
            about.push(one_line(description).into_owned());
        }
        let pad = " ".repeat(widest - width(&value));
        let line = format!("  {mark} {value}{pad}  {}", about.join(" — "));
        lines.push(line.trim_end().to_owned());
    }
    Some(lines.join("\n"))
}

/// One line for each choice `views` show, the current value marked and how it moves: what
/// `check` prints, so an operator sees a mode plugin's modes before any session opens.
pub fn summaries(views: &[PluginView]) -> Vec<String> {
    let mut lines = Vec::new();
    for view in views {
        for widget in &view.widgets {
            let Widget::Choice { label, current, options, command, category, .. } = widget else {
                continue;
            };
            let values: Vec<String> = options
                .iter()
                .map(|option| {
                    let mark = if current.as_deref() == Some(option.value.as_str()) { "●" } else { "○" };
                    format!("{mark} {}", one_line(&option.value))
                })
                .collect();
            let kind = category.as_deref().map_or_else(String::new, |kind| format!(" ({})", one_line(kind)));
            let moved = command.as_deref().map_or_else(
                || "moved by the model only".to_owned(),
                |line| format!("switched by {}", one_line(line)),
            );
            lines.push(format!(
                "{}: {}{kind}: {}; {moved}",
                one_line(&view.plugin),
                one_line(label),
                values.join(" ")
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_host::events::ChoiceOption;

    fn view(command: Option<&str>) -> PluginView {
        let option = |value: &str, label: &str, description: Option<&str>| ChoiceOption {
            value: value.into(),
            label: label.into(),
            description: description.map(Into::into),
        };
        PluginView {
            plugin: "pacer".into(),
            widgets: vec![Widget::Choice {
                id: "pace".into(),
                label: "Pace".into(),
                current: Some("slow".into()),
                options: vec![
                    option("slow", "Slow", Some("one step at a time")),
                    option("fast", "fast", None),
                    option("x\u{1b}", "X", Some("")),
                ],
                command: command.map(Into::into),
                category: None,
            }],
            error: None,
        }
    }

    #[test]
    fn the_command_alone_lists_the_values_with_the_current_one_marked() {
        let listed = listing(" /pace ", &[view(Some("/pace"))]).unwrap();
        assert_eq!(
            listed,
            "Pace: /pace VALUE switches it to one of\n  ● slow   Slow — one step at a time\n  ○ fast\n  ○ x\\x1b  X"
        );
    }

    #[test]
    fn another_line_or_a_choice_without_a_command_lists_nothing() {
        assert_eq!(listing("/pace slow", &[view(Some("/pace"))]), None, "a value was given");
        assert_eq!(listing("/pace", &[view(None)]), None, "only the model moves it");
        assert_eq!(listing("/other", &[view(Some("/pace"))]), None);
    }

    #[test]
    fn a_summary_names_the_plugin_the_values_and_how_the_choice_moves() {
        let mut moved_by_model = view(None);
        moved_by_model.plugin = "stager".into();
        let lines = summaries(&[view(Some("/pace")), moved_by_model]);
        assert_eq!(
            lines,
            [
                "pacer: Pace: ● slow ○ fast ○ x\\x1b; switched by /pace",
                "stager: Pace: ● slow ○ fast ○ x\\x1b; moved by the model only",
            ]
        );
    }
}
