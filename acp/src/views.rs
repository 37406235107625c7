//! What the plugins show, as ACP has places for it: every checklist's entries as the
//! session's `plan`, and a choice as the session's modes and a config option (ACP deprecates
//! modes for config options; editors read either). Drawn from views only.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState, SessionUpdate,
};

use agent_host::events::{EntryState, PluginView, Widget};

/// The views as the client was last told of them.
#[derive(Default)]
pub struct Shown {
    views: BTreeMap<String, PluginView>,
}

/// A choice the client can move: which plugin's, which widget.
pub struct Switch {
    pub plugin: String,
    pub choice: String,
}

impl Shown {
    /// The updates view `view` makes: a plan when a checklist changed, the current mode and
    /// the config options when a choice did.
    pub fn changed(&mut self, view: &PluginView) -> Vec<SessionUpdate> {
        let before = (self.plan(), self.modes().map(|modes| modes.current_mode_id), self.config_options());
        self.views.insert(view.plugin.clone(), view.clone());
        let mut updates = Vec::new();
        let plan = self.plan();
        if plan != before.0 && (has_checklist(view) || !before.0.entries.is_empty()) {
            updates.push(SessionUpdate::Plan(plan));
        }
        if let Some(modes) = self.modes()
            && Some(&modes.current_mode_id) != before.1.as_ref()
        {
            updates.push(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(modes.current_mode_id)));
        }
        let options = self.config_options();
        if options != before.2 {
            updates.push(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)));
        }
        updates
    }

    /// Every checklist's entries, in the plugins' order.
    pub fn plan(&self) -> Plan {
        let entries = self
            .views
            .values()
            .flat_map(|view| &view.widgets)
            .filter_map(|widget| match widget {
                Widget::Checklist { entries, .. } => Some(entries),
                _ => None,
            })
            .flatten()
            .map(|entry| {
                let status = match entry.state {
                    EntryState::Pending => PlanEntryStatus::Pending,
                    EntryState::InProgress => PlanEntryStatus::InProgress,
                    EntryState::Completed => PlanEntryStatus::Completed,
                };
                PlanEntry::new(entry.title.clone(), PlanEntryPriority::Medium, status)
            })
            .collect();
        Plan::new(entries)
    }

    /// Every choice, the one of category `mode` first, then those a client can move (with a
    /// command), then the others, each group in the plugins' order. A choice only the model
    /// moves is still shown: switching it is refused.
    fn choices(&self) -> Vec<(&PluginView, &Widget)> {
        let mut choices: Vec<_> = self
            .views
            .values()
            .flat_map(|view| view.widgets.iter().map(move |widget| (view, widget)))
            .filter(|(_, widget)| matches!(widget, Widget::Choice { .. }))
            .collect();
        choices.sort_by_key(|(_, widget)| match widget {
            Widget::Choice { category: Some(category), .. }
                if acp_category(category) == SessionConfigOptionCategory::Mode =>
            {
                0
            }
            Widget::Choice { command: Some(_), .. } => 1,
            _ => 2,
        });
        choices
    }

    /// The session's modes: the first choice's options.
    pub fn modes(&self) -> Option<SessionModeState> {
        let (_, Widget::Choice { current, options, .. }) = self.choices().into_iter().next()? else {
            return None;
        };
        let current = current.clone().or_else(|| options.first().map(|option| option.value.clone()))?;
        let modes = options
            .iter()
            .map(|option| {
                SessionMode::new(option.value.clone(), option.label.clone())
                    .description(option.description.clone())
            })
            .collect();
        Some(SessionModeState::new(current, modes))
    }

    /// Which choice the modes are.
    pub fn mode_switch(&self) -> Option<Switch> {
        let (view, widget) = self.choices().into_iter().next()?;
        Some(Switch { plugin: view.plugin.clone(), choice: widget.id().to_owned() })
    }

    /// Every choice as a select option, id `plugin/choice`; the modes' one has
    /// category `mode`.
    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        self.choices()
            .into_iter()
            .enumerate()
            .filter_map(|(index, (view, widget))| {
                let Widget::Choice { id, label, current, options, category, .. } = widget else {
                    return None;
                };
                let current =
                    current.clone().or_else(|| options.first().map(|option| option.value.clone()))?;
                let values: Vec<_> = options
                    .iter()
                    .map(|option| {
                        SessionConfigSelectOption::new(option.value.clone(), option.label.clone())
                            .description(option.description.clone())
                    })
                    .collect();
                let category = if index == 0 {
                    Some(SessionConfigOptionCategory::Mode)
                } else {
                    category.as_deref().map(acp_category)
                };
                Some(
                    SessionConfigOption::select(
                        format!("{}/{id}", view.plugin),
                        label.clone(),
                        current,
                        values,
                    )
                    .category(category),
                )
            })
            .collect()
    }

    /// The choice config option `id` names.
    pub fn config_switch(&self, id: &str) -> Option<Switch> {
        let (plugin, choice) = id.split_once('/')?;
        Some(Switch { plugin: plugin.to_owned(), choice: choice.to_owned() })
    }

    /// The command line moving `switch` to `value`, when it lists that value.
    pub fn switch_line(&self, switch: &Switch, value: &str) -> Option<String> {
        self.views.get(&switch.plugin)?.switch_line(&switch.choice, value)
    }
}

/// A view's category as ACP names it: the view contract's words are ACP's.
fn acp_category(category: &str) -> SessionConfigOptionCategory {
    serde_json::from_value(serde_json::Value::from(category.replace('-', "_")))
        .unwrap_or_else(|_| SessionConfigOptionCategory::Other(category.to_owned()))
}

fn has_checklist(view: &PluginView) -> bool {
    view.widgets.iter().any(|widget| matches!(widget, Widget::Checklist { .. }))
}
