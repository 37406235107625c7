//! What a plugin shows (contract 0.2.4, the `viewer` export): a short list of typed widgets
//! that every front end draws the same way without knowing the plugin. Defined here because
//! the event stream carries them whole (`view_changed`); the plugin layer converts the
//! contract's records into these.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One thing a plugin shows. Serialized with a `widget` tag in snake_case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "widget", rename_all = "snake_case")]
#[schemars(deny_unknown_fields)]
pub enum Widget {
    /// A list of things to do, each with where it stands: a plan.
    Checklist {
        /// Stable among the plugin's widgets.
        id: String,
        /// Its heading, for a person.
        label: String,
        entries: Vec<ChecklistEntry>,
    },
    /// One value out of a few: a mode, a stage, a preset.
    Choice {
        /// Stable among the plugin's widgets.
        id: String,
        /// Its name, for a person.
        label: String,
        /// The value it has now, one of `options`; left out when it has none yet.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String")]
        current: Option<String>,
        options: Vec<ChoiceOption>,
        /// The command line that moves it (`/mode`): run with the chosen option's value
        /// appended after a space. Left out when only the model may move it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String")]
        command: Option<String>,
        /// What kind of setting it is, when a front end has a place for it: `mode`, `model`,
        /// `thought-level`. Left out for any other.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String")]
        category: Option<String>,
    },
    /// Anything else, as markdown (shown as text, never as markup).
    Text {
        /// Stable among the plugin's widgets.
        id: String,
        /// Its heading, for a person.
        label: String,
        markdown: String,
    },
}

/// One entry of a checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ChecklistEntry {
    /// What is to be done ("Write the tests").
    pub title: String,
    pub state: EntryState,
    /// While in progress, what is being done ("Writing the tests"); left out when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub active_form: Option<String>,
    /// More about the entry; left out when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub detail: Option<String>,
}

/// Where an entry stands: one to one with ACP's plan entry status and codex's step status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryState {
    Pending,
    InProgress,
    Completed,
}

/// One value a choice may take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ChoiceOption {
    /// The value, as the choice's command takes it.
    pub value: String,
    /// How a person should see it.
    pub label: String,
    /// One line on what it means; left out when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub description: Option<String>,
}

/// A plugin's view as the host keeps it: its widgets, or the error its `view` call ended
/// with, shown in their place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PluginView {
    /// The plugin (its name).
    pub plugin: String,
    /// What it shows, in its order; empty when it shows nothing now (or failed).
    pub widgets: Vec<Widget>,
    /// Why its last `view` call failed; left out when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub error: Option<String>,
}

/// The kinds of setting a choice may be (its `category`), as the contract names them; any
/// other category is a plugin's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChoiceCategory {
    Mode,
    Model,
    ThoughtLevel,
}

impl ChoiceCategory {
    /// The category `category` names, when the contract knows it.
    pub fn of(category: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::from(category)).ok()
    }
}

impl Widget {
    /// The widget's id, stable among its plugin's widgets.
    pub fn id(&self) -> &str {
        match self {
            Self::Checklist { id, .. } | Self::Choice { id, .. } | Self::Text { id, .. } => id,
        }
    }

    /// The bytes of every text the widget carries: what a plugin's output cap counts.
    pub fn text_bytes(&self) -> usize {
        let optional = |text: &Option<String>| text.as_ref().map_or(0, String::len);
        match self {
            Self::Checklist { id, label, entries } => {
                let entry = |entry: &ChecklistEntry| {
                    entry.title.len() + optional(&entry.active_form) + optional(&entry.detail)
                };
                id.len() + label.len() + entries.iter().map(entry).sum::<usize>()
            }
            Self::Choice { id, label, current, options, command, category } => {
                let option = |option: &ChoiceOption| {
                    option.value.len() + option.label.len() + optional(&option.description)
                };
                id.len()
                    + label.len()
                    + optional(current)
                    + options.iter().map(option).sum::<usize>()
                    + optional(command)
                    + optional(category)
            }
            Self::Text { id, label, markdown } => id.len() + label.len() + markdown.len(),
        }
    }
}

impl PluginView {
    /// The line `value` switches `choice` of this view with: the choice's command and the
    /// value, when the choice has a command and lists the value; `None` otherwise, so a
    /// front end (or a principal over HTTP) can move a choice only where the plugin offers.
    pub fn switch_line(&self, choice: &str, value: &str) -> Option<String> {
        self.widgets.iter().find_map(|widget| match widget {
            Widget::Choice { id, options, command: Some(command), .. }
                if id == choice && options.iter().any(|option| option.value == value) =>
            {
                Some(format!("{} {value}", command.trim_end()))
            }
            _ => None,
        })
    }
}

/// A choice of two stages, `triage` (current) and `fix`, moved by `command` if given: what
/// the tests of views and of their switches share, here and in the front ends (feature
/// `testing`).
#[cfg(any(test, feature = "testing"))]
pub fn stages(command: Option<&str>) -> PluginView {
    let option = |value: &str| ChoiceOption { value: value.into(), label: value.into(), description: None };
    PluginView {
        plugin: "stages".into(),
        widgets: vec![Widget::Choice {
            id: "stage".into(),
            label: "Stage".into(),
            current: Some("triage".into()),
            options: vec![option("triage"), option("fix")],
            command: command.map(Into::into),
            category: None,
        }],
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_switches_only_to_a_listed_value_and_only_with_a_command() {
        assert_eq!(stages(Some("/stage")).switch_line("stage", "fix").as_deref(), Some("/stage fix"));
        assert_eq!(stages(Some("/stage")).switch_line("stage", "fix; rm -rf /"), None);
        assert_eq!(stages(Some("/stage")).switch_line("other", "fix"), None);
        assert_eq!(stages(None).switch_line("stage", "fix"), None);
    }

    #[test]
    fn widgets_go_out_tagged_and_leave_out_what_is_not_said() {
        let wire = serde_json::to_value(stages(None)).unwrap();
        assert_eq!(
            wire,
            serde_json::json!({"plugin": "stages", "widgets": [{
                "widget": "choice", "id": "stage", "label": "Stage", "current": "triage",
                "options": [{"value": "triage", "label": "triage"}, {"value": "fix", "label": "fix"}]
            }]})
        );
        let entry = ChecklistEntry {
            title: "Write the tests".into(),
            state: EntryState::InProgress,
            active_form: Some("Writing the tests".into()),
            detail: None,
        };
        assert_eq!(
            serde_json::to_value(entry).unwrap(),
            serde_json::json!({"title": "Write the tests", "state": "in_progress", "active_form": "Writing the tests"})
        );
    }

    #[test]
    fn a_widgets_text_bytes_are_every_text_it_carries() {
        // "stage" 5 + "Stage" 5 + current "triage" 6 + options 6+6 and 3+3.
        assert_eq!(stages(None).widgets[0].text_bytes(), 34);
        // The same with the command "/stage" (6) and a category "mode" (4).
        let Widget::Choice { id, label, current, options, .. } = stages(None).widgets[0].clone() else {
            unreachable!()
        };
        let commanded = Widget::Choice {
            id,
            label,
            current,
            options,
            command: Some("/stage".into()),
            category: Some("mode".into()),
        };
        assert_eq!(commanded.text_bytes(), 44);
        let entry = ChecklistEntry {
            title: "Write".into(),
            state: EntryState::Pending,
            active_form: Some("Writing".into()),
            detail: Some("x".into()),
        };
        let list = Widget::Checklist { id: "l".into(), label: "Plan".into(), entries: vec![entry] };
        assert_eq!(list.text_bytes(), 1 + 4 + 5 + 7 + 1);
    }
}
