//! A plugin's view as console lines, drawn the same way for any plugin: a checklist as one
//! `✓` / `◐` / `○` line per entry under its label, a choice as one `Label: current` line (with
//! the command that switches it), a text section dimmed. Only what changed since the view drawn
//! before is drawn again, and a switch of a choice is one line, `Label: from → to`. Every
//! string came from a plugin, so each goes through [`agent_host::sanitize`]; only the colour codes
//! given here are the host's.

use super::markdown::Markdown;
use agent_host::events::{ChecklistEntry, EntryState, PluginView, Widget};
use agent_host::sanitize::{multi_line, one_line};

/// The codes the lines are coloured with (the renderer's), and whether a text section's
/// markdown is rendered as a reply's is (at a terminal) or left as it is written.
pub struct Colors {
    pub dim: &'static str,
    pub warn: &'static str,
    pub reset: &'static str,
    pub markdown: bool,
}

/// The lines that draw `view` (none for a plugin that shows nothing now), or only what of it
/// differs from `before`, the view of the same plugin drawn
/// last: a widget unchanged is not drawn again, a choice whose value moved is one line.
pub fn changed_lines(view: &PluginView, before: Option<&PluginView>, colors: &Colors) -> Vec<String> {
    let Colors { warn, reset, .. } = colors;
    if let Some(error) = &view.error {
        return vec![format!(
            "{warn}⚠ {}: its view failed: {}{reset}",
            one_line(&view.plugin),
            one_line(error)
        )];
    }
    let drawn = |id: &str| before.and_then(|before| before.widgets.iter().find(|widget| widget.id() == id));
    view.widgets
        .iter()
        .flat_map(|widget| match (widget, drawn(widget.id())) {
            (widget, Some(same)) if same == widget => Vec::new(),
            (
                Widget::Choice { label, current: Some(to), options, command, .. },
                Some(Widget::Choice {
                    current: Some(from),
                    options: options_before,
                    command: command_before,
                    ..
                }),
            ) if options == options_before && command == command_before => {
                vec![format!("{}: {} → {}", one_line(label), one_line(from), one_line(to))]
            }
            (widget, _) => widget_lines(widget, colors),
        })
        .collect()
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
        Widget::Text { label, markdown, .. } if colors.markdown => {
            // Escaped first, then rendered by the reply's renderer (which escapes again what
            // its parser decodes): its styles are the only codes written.
            let mut rendered = Markdown::default();
            let mut lines = rendered.push(&format!("{}\n", multi_line(markdown.trim())));
            lines.extend(rendered.finish());
            match lines.as_slice() {
                [] => vec![format!("{dim}{}{reset}", one_line(label))],
                [only] => vec![format!("{dim}{}:{reset} {only}", one_line(label))],
                lines => std::iter::once(format!("{dim}{}:{reset}", one_line(label)))
                    .chain(lines.iter().map(|line| format!("  {line}")))
                    .collect(),
            }
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
    use agent_host::events::ChoiceOption;

    const PLAIN: Colors = Colors { dim: "", warn: "", reset: "", markdown: false };

    /// The lines of a view drawn for the first time.
    fn view_lines(view: &PluginView, colors: &Colors) -> Vec<String> {
        changed_lines(view, None, colors)
    }

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
    fn only_what_changed_is_drawn_again_and_a_switch_is_one_line() {
        let plan = |entries| Widget::Checklist { id: "p".into(), label: "Plan".into(), entries };
        let before = view(vec![
            choice(Some("walk"), Some("/pace")),
            plan(vec![entry("Warm up", EntryState::Pending)]),
        ]);
        let switched =
            view(vec![choice(Some("run"), Some("/pace")), plan(vec![entry("Warm up", EntryState::Pending)])]);
        assert_eq!(changed_lines(&switched, Some(&before), &PLAIN), ["Pace: walk → run"]);
        assert!(changed_lines(&before, Some(&before), &PLAIN).is_empty(), "nothing changed, nothing drawn");
        let ticked = view(vec![
            choice(Some("walk"), Some("/pace")),
            plan(vec![entry("Warm up", EntryState::Completed)]),
        ]);
        assert_eq!(changed_lines(&ticked, Some(&before), &PLAIN), ["Plan", "  ✓ Warm up"]);
        let first = view(vec![choice(Some("walk"), None)]);
        assert_eq!(
            changed_lines(&first, Some(&before), &PLAIN),
            ["Pace: walk"],
            "its command went: drawn whole"
        );
    }

    #[test]
    fn a_text_section_is_dimmed_and_keeps_its_lines() {
        let colors = Colors { dim: "<d>", warn: "<w>", reset: "</>", markdown: false };
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
    fn at_a_terminal_a_text_section_is_rendered_as_markdown_and_stays_escaped() {
        let colors = Colors { dim: "<d>", warn: "<w>", reset: "</>", markdown: true };
        let text = |markdown: &str| Widget::Text {
            id: "t".into(),
            label: "Notes".into(),
            markdown: markdown.into(),
        };
        let lines = view_lines(&view(vec![text("**two** entries, `x`\n\n- one\n- two \x1b[2J")]), &colors);
        assert_eq!(lines[0], "<d>Notes:</>", "{lines:?}");
        let shown = lines.join("\n");
        assert!(shown.contains("\x1b[1mtwo\x1b[0m entries") && !shown.contains("**"), "{shown:?}");
        assert!(shown.contains("• one") && !shown.contains("- one"), "{shown:?}");
        assert!(shown.contains("two \\x1b[2J") && !shown.contains("\x1b[2J"), "escaped: {shown:?}");
        let one = view_lines(&view(vec![text("just *one*")]), &colors);
        assert!(one.len() == 1 && one[0].starts_with("<d>Notes:</> just \x1b[3mone\x1b[0m"), "{one:?}");
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
