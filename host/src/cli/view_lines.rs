//! A plugin's view as console lines, drawn the same way for any plugin: a checklist as one
//! `✓` / `◐` / `○` line per entry under its label, a choice as one `Label: current` line (with
//! the command that switches it), a text section dimmed. Every string came from a plugin, so
//! each goes through [`crate::sanitize`]; only the colour codes given here are the host's.

use crate::events::{ChecklistEntry, EntryState, PluginView, Widget};
use crate::sanitize::{multi_line, one_line};

/// The codes the lines are coloured with (the renderer's).
pub struct Colors {
    pub dim: &'static str,
    pub warn: &'static str,
    pub reset: &'static str,
}

/// The lines that draw `view`; none for a plugin that shows nothing (now).
pub fn view_lines(view: &PluginView, colors: &Colors) -> Vec<String> {
    let Colors { warn, reset, .. } = colors;
    if let Some(error) = &view.error {
        return vec![format!(
            "{warn}⚠ {}: its view failed: {}{reset}",
            one_line(&view.plugin),
            one_line(error)
        )];
    }
    view.widgets.iter().flat_map(|widget| widget_lines(widget, colors)).collect()
}

fn widget_lines(widget: &Widget, colors: &Colors) -> Vec<String> {
    let Colors { dim, reset, .. } = colors;
    match widget {
        Widget::Checklist { label, entries, .. } if entries.is_empty() => {
            vec![format!("{dim}{}: nothing yet{reset}", one_line(label))]
        }
        Widget::Checklist { label, entries, .. } => std::iter::once(one_line(label).into_owned())
            .chain(entries.iter().map(|entry| entry_line(entry, colors)))
            .collect(),
        Widget::Choice { label, current, options, command, .. } => {
            let current = current.as_deref().map_or_else(|| "(none)".into(), one_line);
            let switch = command.as_deref().map_or_else(String::new, |command| {
                let values: Vec<_> = options.iter().map(|option| one_line(&option.value)).collect();
                format!("  {dim}({} {}){reset}", one_line(command.trim_end()), values.join("|"))
            });
            vec![format!("{}: {current}{switch}", one_line(label))]
        }
        Widget::Text { label, markdown, .. } => {
            let text = multi_line(markdown.trim());
            match text.lines().collect::<Vec<_>>().as_slice() {
                [] => vec![format!("{dim}{}{reset}", one_line(label))],
                [only] => vec![format!("{dim}{}: {only}{reset}", one_line(label))],
                lines => std::iter::once(format!("{dim}{}:{reset}", one_line(label)))
                    .chain(lines.iter().map(|line| format!("{dim}  {line}{reset}")))
                    .collect(),
            }
        }
    }
}

/// `  ✓ Write the tests`, `  ◐ Writing the docs` (the active form while in progress),
/// `  ○ Release`, with the detail after a dash.
fn entry_line(entry: &ChecklistEntry, Colors { dim, reset, .. }: &Colors) -> String {
    let (mark, text) = match entry.state {
        EntryState::Completed => ("✓", &entry.title),
        EntryState::InProgress => ("◐", entry.active_form.as_ref().unwrap_or(&entry.title)),
        EntryState::Pending => ("○", &entry.title),
    };
    let detail =
        entry.detail.as_deref().map_or_else(String::new, |d| format!(" {dim}— {}{reset}", one_line(d)));
    format!("  {mark} {}{detail}", one_line(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::ChoiceOption;

    const PLAIN: Colors = Colors { dim: "", warn: "", reset: "" };

    fn entry(title: &str, state: EntryState) -> ChecklistEntry {
        ChecklistEntry { title: title.into(), state, active_form: None, detail: None }
    }

    fn view(widgets: Vec<Widget>) -> PluginView {
        PluginView { plugin: "planner".into(), widgets, error: None }
    }

    fn choice(current: Option<&str>, command: Option<&str>) -> Widget {
        let option =
            |value: &str| ChoiceOption { value: value.into(), label: value.into(), description: None };
        Widget::Choice {
            id: "pace".into(),
            label: "Pace".into(),
            current: current.map(Into::into),
            options: vec![option("walk"), option("run")],
            command: command.map(Into::into),
            category: None,
        }
    }

    #[test]
    fn a_checklist_is_one_line_per_entry_under_its_label() {
        let entries = vec![
            entry("Write the tests", EntryState::Completed),
            ChecklistEntry {
                active_form: Some("Writing the docs".into()),
                detail: Some("README first".into()),
                ..entry("Write the docs", EntryState::InProgress)
            },
            entry("Release", EntryState::Pending),
        ];
        let lines = view_lines(
            &view(vec![Widget::Checklist { id: "p".into(), label: "Plan".into(), entries }]),
            &PLAIN,
        );
        assert_eq!(
            lines,
            ["Plan", "  ✓ Write the tests", "  ◐ Writing the docs — README first", "  ○ Release"]
        );
        let in_progress = vec![entry("Write the docs", EntryState::InProgress)];
        let widget = Widget::Checklist { id: "p".into(), label: "Plan".into(), entries: in_progress };
        assert_eq!(
            view_lines(&view(vec![widget]), &PLAIN),
            ["Plan", "  ◐ Write the docs"],
            "no active form: the title"
        );
        let empty = Widget::Checklist { id: "p".into(), label: "Plan".into(), entries: Vec::new() };
        assert_eq!(view_lines(&view(vec![empty]), &PLAIN), ["Plan: nothing yet"]);
    }

    #[test]
    fn a_choice_is_one_line_with_the_command_that_switches_it() {
        assert_eq!(
            view_lines(&view(vec![choice(Some("run"), Some("/pace "))]), &PLAIN),
            ["Pace: run  (/pace walk|run)"]
        );
        assert_eq!(
            view_lines(&view(vec![choice(Some("walk"), None)]), &PLAIN),
            ["Pace: walk"],
            "only the model moves it"
        );
        assert_eq!(view_lines(&view(vec![choice(None, None)]), &PLAIN), ["Pace: (none)"]);
    }

    #[test]
    fn a_text_section_is_dimmed_and_keeps_its_lines() {
        let colors = Colors { dim: "<d>", warn: "<w>", reset: "</>" };
        let text = |markdown: &str| Widget::Text {
            id: "t".into(),
            label: "Notes".into(),
            markdown: markdown.into(),
        };
        assert_eq!(view_lines(&view(vec![text("two entries\n")]), &colors), ["<d>Notes: two entries</>"]);
        assert_eq!(
            view_lines(&view(vec![text("- one\n- two")]), &colors),
            ["<d>Notes:</>", "<d>  - one</>", "<d>  - two</>"]
        );
    }

    #[test]
    fn a_failed_view_shows_its_error_and_an_empty_view_nothing() {
        let failed = PluginView {
            error: Some("the plugin trapped\nat view".into()),
            ..view(vec![choice(None, None)])
        };
        assert_eq!(view_lines(&failed, &PLAIN), ["⚠ planner: its view failed: the plugin trapped\\nat view"]);
        assert!(view_lines(&view(Vec::new()), &PLAIN).is_empty());
    }

    #[test]
    fn what_a_plugin_wrote_cannot_reach_the_terminal_raw() {
        let hostile = "\x1b[2J\u{202e}evil\r";
        let entries =
            vec![ChecklistEntry { detail: Some(hostile.into()), ..entry(hostile, EntryState::Pending) }];
        let widgets = vec![
            Widget::Checklist { id: "p".into(), label: hostile.into(), entries },
            Widget::Choice {
                id: "c".into(),
                label: hostile.into(),
                current: Some(hostile.into()),
                options: vec![ChoiceOption { value: hostile.into(), label: "x".into(), description: None }],
                command: Some(hostile.into()),
                category: None,
            },
            Widget::Text { id: "t".into(), label: hostile.into(), markdown: format!("{hostile}\n{hostile}") },
        ];
        let lines = view_lines(&PluginView { plugin: hostile.into(), widgets, error: None }, &PLAIN);
        assert_eq!(lines.len(), 6, "{lines:?}");
        for line in &lines {
            assert!(!line.contains(['\x1b', '\u{202e}', '\r']), "{line:?}");
        }
        let failed = PluginView { plugin: hostile.into(), widgets: Vec::new(), error: Some(hostile.into()) };
        assert!(!view_lines(&failed, &PLAIN)[0].contains(['\x1b', '\u{202e}', '\r']));
    }
}
