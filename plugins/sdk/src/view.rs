//! What front ends show of a plugin (contract 0.2.4, the `viewer` export): a short list of
//! typed widgets, built with [`Checklist`], [`Choice`] and [`Text`] and returned from the
//! function given to [`Plugin::view`]. The host asks for a view only when the plugin's state
//! may have changed, keeps it, and sends it whole to every front end, which draws it without
//! knowing the plugin: a checklist as a plan, a choice with a command as a switcher.
//!
//! ```ignore
//! fn view(ctx: &Context<Config>) -> Vec<Widget> {
//!     vec![
//!         Choice::new("stage", "Stage")
//!             .current(Some("triage"))
//!             .option("triage", "Triage", "Reproduce and classify")
//!             .option("fix", "Fix", "Change the code")
//!             .category("mode")
//!             .into(),
//!     ]
//! }
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bindings::agent_host::plugin::types::CallContext;
pub use crate::bindings::exports::agent_host::plugin::viewer::{
    Checklist as ChecklistWidget, ChecklistEntry, Choice as ChoiceWidget, ChoiceOption, EntryState,
    TextSection, Widget,
};
use crate::{Context, Plugin};

/// The `view` hook: what the plugin shows now, read from state.
pub type View<C> = fn(&Context<C>) -> Vec<Widget>;

/// A list of things to do, each with where it stands: a plan.
pub struct Checklist(ChecklistWidget);

impl Checklist {
    /// An empty checklist; `id` is stable among the plugin's widgets, `label` its heading.
    pub fn new(id: &str, label: &str) -> Self {
        Self(ChecklistWidget { id: id.to_owned(), label: label.to_owned(), entries: Vec::new() })
    }

    /// Adds an entry: what is to be done, and where it stands.
    pub fn entry(mut self, title: &str, state: EntryState) -> Self {
        self.0.entries.push(entry(title, state));
        self
    }

    /// Adds an entry built with [`entry`] (to give its active form or detail).
    pub fn with(mut self, entry: ChecklistEntry) -> Self {
        self.0.entries.push(entry);
        self
    }
}

/// An entry of a checklist, to be given its [`active_form`](EntryExt::active_form) or
/// [`detail`](EntryExt::detail) before [`Checklist::with`].
pub fn entry(title: &str, state: EntryState) -> ChecklistEntry {
    ChecklistEntry { title: title.to_owned(), state, active_form: None, detail: None }
}

/// Builders for a [`ChecklistEntry`].
pub trait EntryExt {
    /// While in progress, what is being done ("Writing the tests"); blank is none.
    fn active_form(self, text: &str) -> Self;
    /// More about the entry; blank is none.
    fn detail(self, text: &str) -> Self;
}

impl EntryExt for ChecklistEntry {
    fn active_form(mut self, text: &str) -> Self {
        self.active_form = non_blank(text);
        self
    }

    fn detail(mut self, text: &str) -> Self {
        self.detail = non_blank(text);
        self
    }
}

/// One value out of a few: a mode, a stage, a preset.
pub struct Choice(ChoiceWidget);

impl Choice {
    /// A choice with no options yet; `id` is stable among the plugin's widgets, `label` its
    /// name for a person.
    pub fn new(id: &str, label: &str) -> Self {
        Self(ChoiceWidget {
            id: id.to_owned(),
            label: label.to_owned(),
            current: None,
            options: Vec::new(),
            command: None,
            category: None,
        })
    }

    /// The value it has now (one of the options), if any.
    pub fn current(mut self, value: Option<&str>) -> Self {
        self.0.current = value.map(str::to_owned);
        self
    }

    /// Adds an option: its value, how a person sees it, and one line on what it means
    /// (blank for none).
    pub fn option(mut self, value: &str, label: &str, description: &str) -> Self {
        self.0.options.push(ChoiceOption {
            value: value.to_owned(),
            label: label.to_owned(),
            description: non_blank(description),
        });
        self
    }

    /// The command line an operator moves it with (`/mode`); the host runs it with the chosen
    /// value appended. Without one, only the model moves it.
    pub fn command(mut self, line: &str) -> Self {
        self.0.command = Some(line.to_owned());
        self
    }

    /// What kind of setting it is when a front end has a place for it: `mode`, `model`,
    /// `thought-level`.
    pub fn category(mut self, category: &str) -> Self {
        self.0.category = Some(category.to_owned());
        self
    }
}

/// Anything else, as markdown (front ends show it as text, never as markup).
pub struct Text(TextSection);

impl Text {
    pub fn new(id: &str, label: &str, markdown: &str) -> Self {
        Self(TextSection { id: id.to_owned(), label: label.to_owned(), markdown: markdown.to_owned() })
    }
}

impl From<Checklist> for Widget {
    fn from(checklist: Checklist) -> Self {
        Widget::Checklist(checklist.0)
    }
}

impl From<Choice> for Widget {
    fn from(choice: Choice) -> Self {
        Widget::Choice(choice.0)
    }
}

impl From<Text> for Widget {
    fn from(text: Text) -> Self {
        Widget::Text(text.0)
    }
}

fn non_blank(text: &str) -> Option<String> {
    (!text.trim().is_empty()).then(|| text.to_owned())
}

impl<C: DeserializeOwned + Serialize + 'static> Plugin<C> {
    /// What front ends show of the plugin, as widgets read from state. The host asks only
    /// when the plugin's state may have changed; its writes and events are discarded.
    pub fn view(mut self, view: View<C>) -> Self {
        self.view = Some(view);
        self
    }

    /// [`view`](Self::view), for a view read only from the configuration and the state
    /// (not the session id, the clock or files): the host keeps what it showed with the
    /// values it read (`reuse.until-state-changes`, contract 0.2.9) and shows it again
    /// without calling the plugin wherever the state holds them — every new session's first
    /// view, for one.
    pub fn view_from_state(mut self, view: View<C>) -> Self {
        self.view = Some(view);
        self.view_from_state = true;
        self
    }

    /// The `viewer` interface's `shows`: whether a view was declared.
    pub fn shows_raw(&self, _config: &str) -> bool {
        self.view.is_some()
    }

    /// The `viewer` interface's `view`; nothing when no view was declared or the
    /// configuration does not fit.
    pub fn view_raw(&self, ctx: CallContext) -> Vec<Widget> {
        let Some(view) = self.view else { return Vec::new() };
        self.with_context(ctx, |ctx| {
            if self.view_from_state {
                crate::host::reuse::until_state_changes();
            }
            view(ctx)
        })
        .unwrap_or_default()
    }
}
