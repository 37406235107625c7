//! Checks on what a plugin returns, before the host uses it: JSON that must be JSON, names
//! that must be names, and text cut to the plugin's `max_output_kb`.

use super::types::{
    CompactorSpec, Configured, Contribution, Exports, Manifest, PluginCompaction, PostToolOutcome,
    PreCompactOutcome, PreToolOutcome, PromptOutcome, ReviewVerdict, StopOutcome, TurnVerdict,
};
use crate::compacted_history::Replacement;
use crate::events::Widget;
use crate::tools::cap_text;

/// A value a plugin call can return.
pub trait Returned {
    /// Cuts overlong text to `max_bytes`; an error is a broken contract.
    fn check(&mut self, _max_bytes: usize) -> Result<(), String> {
        Ok(())
    }

    /// Whether the call's state writes should be kept. A tool or command that returns an
    /// error changes nothing.
    fn commits(&self) -> bool {
        true
    }
}

impl Returned for Manifest {}

impl Returned for Result<Configured, String> {}

/// What `status` returns: capped like any text, and never committed (see
/// `LoadedPlugin::status`).
pub(super) struct StatusText(pub Option<String>);

impl Returned for StatusText {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        self.0.check(max_bytes)
    }

    fn commits(&self) -> bool {
        false
    }
}

/// What `provide` returns when asked ahead (`ahead.rs`): checked as any contribution, and
/// never committed.
pub(super) struct ProvidedAhead(pub Contribution);

impl Returned for ProvidedAhead {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        self.0.check(max_bytes)
    }

    fn commits(&self) -> bool {
        false
    }
}

impl Returned for Result<String, String> {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        match self {
            Ok(text) | Err(text) => cap_text(text, max_bytes),
        }
        Ok(())
    }

    fn commits(&self) -> bool {
        self.is_ok()
    }
}

impl Returned for Option<String> {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        if let Some(text) = self {
            cap_text(text, max_bytes);
        }
        Ok(())
    }
}

impl Returned for Contribution {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        if let Some(text) = &mut self.instructions {
            cap_text(text, max_bytes);
        }
        for message in &mut self.messages {
            cap_text(&mut message.content, max_bytes);
        }
        for tool in &self.tools {
            if !valid_tool_name(&tool.name) {
                return Err(format!(
                    "tool name `{}` must be 1-64 characters of a-z, A-Z, 0-9, `_` and `-`",
                    tool.name
                ));
            }
        }
        Ok(())
    }
}

impl Returned for PromptOutcome {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        if let Some(text) = &mut self.context {
            cap_text(text, max_bytes);
        }
        Ok(())
    }
}

impl Returned for PreToolOutcome {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        if let Some(text) = &mut self.context {
            cap_text(text, max_bytes);
        }
        if let Some(arguments) = &self.updated_arguments {
            let value: serde_json::Value = serde_json::from_str(arguments)
                .map_err(|error| format!("updated arguments are not JSON: {error}"))?;
            if !value.is_object() {
                return Err("updated arguments are not a JSON object".into());
            }
        }
        Ok(())
    }
}

impl Returned for PostToolOutcome {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        if let Some(result) = &mut self.replace {
            cap_text(&mut result.output, max_bytes);
        }
        Ok(())
    }
}

impl Returned for StopOutcome {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        if let StopOutcome::Continue(text) = self {
            cap_text(text, max_bytes);
        }
        Ok(())
    }
}

impl Returned for TurnVerdict {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        match self {
            TurnVerdict::Continue(text) | TurnVerdict::Stop { message: text, .. } => {
                cap_text(text, max_bytes)
            }
            TurnVerdict::End => {}
        }
        Ok(())
    }
}

impl Returned for ReviewVerdict {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        if let ReviewVerdict::Deny(text) | ReviewVerdict::Error(text) = self {
            cap_text(text, max_bytes);
        }
        Ok(())
    }
}

impl Returned for CompactorSpec {
    fn check(&mut self, _max_bytes: usize) -> Result<(), String> {
        match self.trigger_percent {
            Some(percent) if !(1..=100).contains(&percent) => {
                Err(format!("`spec` gives a trigger of {percent}%; it must be 1 to 100"))
            }
            _ => Ok(()),
        }
    }
}

/// A compaction's new messages and note are capped like any text; whether what is left is
/// usable is for `compacted_history::check`.
impl Returned for Result<Option<PluginCompaction>, String> {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        match self {
            Ok(Some(compaction)) => {
                cap_text(&mut compaction.note, max_bytes);
                for entry in &mut compaction.compaction.entries {
                    if let Replacement::Summary(message) = entry {
                        cap_text(&mut message.content, max_bytes);
                    }
                }
            }
            Ok(None) => {}
            Err(text) => cap_text(text, max_bytes),
        }
        Ok(())
    }

    fn commits(&self) -> bool {
        self.is_ok()
    }
}

impl Returned for PreCompactOutcome {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        if let Some(text) = &mut self.veto {
            cap_text(text, max_bytes);
        }
        Ok(())
    }
}

impl Returned for () {}

/// The `judge` export's `spec`: which of its functions a plugin implements.
impl Returned for Exports {}

impl Returned for bool {}

/// What `view` returns: never committed (see `LoadedPlugin::view`), its text capped like any
/// text (the whole view within `max_output_kb`), and every widget's id unique.
pub(super) struct ViewWidgets(pub Vec<Widget>);

impl Returned for ViewWidgets {
    fn check(&mut self, max_bytes: usize) -> Result<(), String> {
        // A view has a handful of widgets: comparing each id with those before it allocates nothing.
        let widgets = &self.0;
        let repeated =
            (1..widgets.len()).find(|&at| widgets[..at].iter().any(|w| w.id() == widgets[at].id()));
        if let Some(at) = repeated {
            return Err(format!("`view` gives two widgets the id `{}`", widgets[at].id()));
        }
        let bytes: usize = widgets.iter().map(Widget::text_bytes).sum();
        if bytes > max_bytes {
            return Err(format!(
                "`view` returned {bytes} bytes of text in its widgets, over the plugin's {max_bytes}"
            ));
        }
        Ok(())
    }

    fn commits(&self) -> bool {
        false
    }
}

/// Tool names as the OpenAI API accepts them.
fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(id: &str, markdown: &str) -> Widget {
        Widget::Text { id: id.into(), label: "L".into(), markdown: markdown.into() }
    }

    #[test]
    fn a_view_is_refused_for_a_repeated_id_or_more_text_than_the_cap() {
        let mut twice = ViewWidgets(vec![text("a", ""), text("b", ""), text("a", "")]);
        assert_eq!(twice.check(1024).unwrap_err(), "`view` gives two widgets the id `a`");
        // 1 (id) + 1 (label) + 8 (markdown) bytes each.
        let mut view = ViewWidgets(vec![text("a", "12345678"), text("b", "12345678")]);
        assert!(view.check(20).is_ok());
        assert_eq!(
            view.check(19).unwrap_err(),
            "`view` returned 20 bytes of text in its widgets, over the plugin's 19"
        );
    }
}
