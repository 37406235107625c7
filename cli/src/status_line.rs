//! The line drawn after each turn at a terminal: the choices the plugins show (a mode), how
//! far their checklists are (k/n), the tokens in use of the window, and the session.

use agent_host::events::{EntryState, PluginView, Widget};
use agent_host::sanitize::one_line;

/// `mode: plan · Plan 2/5 · 1,234/128,000 tokens · session 0123…`; `tokens` is the context
/// badge, when known.
pub fn status_line(views: &[PluginView], tokens: Option<String>, session: &str) -> String {
    let mut parts = Vec::new();
    for widget in views.iter().flat_map(|view| &view.widgets) {
        match widget {
            Widget::Choice { label, current: Some(current), .. } => {
                parts.push(format!("{}: {}", one_line(label), one_line(current)));
            }
            Widget::Checklist { label, entries, .. } if !entries.is_empty() => {
                let done = entries.iter().filter(|entry| entry.state == EntryState::Completed).count();
                parts.push(format!("{} {done}/{}", one_line(label), entries.len()));
            }
            _ => {}
        }
    }
    parts.extend(tokens);
    parts.push(format!("session {}", one_line(session)));
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_host::events::{ChecklistEntry, ChoiceOption};

    #[test]
    fn the_status_line_shows_choices_checklists_tokens_and_the_session() {
        let entry = |state| ChecklistEntry { title: "t".into(), state, active_form: None, detail: None };
        let view = PluginView {
            plugin: "p".into(),
            widgets: vec![
                Widget::Choice {
                    id: "stage".into(),
                    label: "stage".into(),
                    current: Some("fix".into()),
                    options: vec![ChoiceOption {
                        value: "fix".into(),
                        label: "Fix".into(),
                        description: None,
                    }],
                    command: None,
                    category: None,
                },
                Widget::Checklist {
                    id: "plan".into(),
                    label: "Plan".into(),
                    entries: vec![
                        entry(EntryState::Completed),
                        entry(EntryState::InProgress),
                        entry(EntryState::Pending),
                    ],
                },
                Widget::Text { id: "n".into(), label: "Notes".into(), markdown: "x".into() },
            ],
            error: None,
        };
        assert_eq!(
            status_line(&[view], Some("1,234/8,000 tokens".into()), "s1"),
            "stage: fix · Plan 1/3 · 1,234/8,000 tokens · session s1"
        );
        assert_eq!(status_line(&[], None, "s\n2"), "session s\\n2");
    }
}
