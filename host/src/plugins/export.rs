//! The exports of the `guest` interface (and of the optional ones: since contract 0.2.3 the
//! `compactor` interface, since 0.2.4 the `viewer`, since 0.2.7 the `judge`), and where each sits in one plugin's
//! component: looked up once per load, so a call finds the one export it needs without a name
//! lookup.

use wasmtime::component::{Component, ComponentExportIndex};

use super::contract::Line;

/// One export of the `guest` interface, or of an optional one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    Manifest,
    Configure,
    Provide,
    CallTool,
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    Stop,
    Command,
    /// Since contract 0.2.0.
    Status,
    /// Since contract 0.2.3, in the `compactor` interface.
    CompactorSpec,
    Compact,
    PreCompact,
    PostCompact,
    /// Since contract 0.2.4, in the `viewer` interface.
    ViewerShows,
    View,
    /// Since contract 0.2.7, in the `judge` interface.
    JudgeSpec,
    TurnEnd,
    Review,
    Queued,
}

/// The interfaces a plugin's exports sit in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    /// Every plugin's.
    Guest,
    /// Since 0.2.3, optional: found by name.
    Compactor,
    /// Since 0.2.4, optional: found by name.
    Viewer,
    /// Since 0.2.7, optional: found by name.
    Judge,
}

impl Interface {
    /// The optional interfaces, which a component may leave out.
    pub const OPTIONAL: [Interface; 3] = [Interface::Compactor, Interface::Viewer, Interface::Judge];

    /// What the interface is called, before its version.
    pub fn prefix(self) -> &'static str {
        match self {
            Interface::Guest => "agent-host:plugin/guest@",
            Interface::Compactor => "agent-host:plugin/compactor@",
            Interface::Viewer => "agent-host:plugin/viewer@",
            Interface::Judge => "agent-host:plugin/judge@",
        }
    }
}

impl Export {
    pub const ALL: [Export; 21] = [
        Export::Manifest,
        Export::Configure,
        Export::Provide,
        Export::CallTool,
        Export::SessionStart,
        Export::UserPromptSubmit,
        Export::PreToolUse,
        Export::PostToolUse,
        Export::Stop,
        Export::Command,
        Export::Status,
        Export::CompactorSpec,
        Export::Compact,
        Export::PreCompact,
        Export::PostCompact,
        Export::ViewerShows,
        Export::View,
        Export::JudgeSpec,
        Export::TurnEnd,
        Export::Review,
        Export::Queued,
    ];

    /// The export's name in the WIT contract.
    pub fn wit_name(self) -> &'static str {
        match self {
            Export::Manifest => "manifest",
            Export::Configure => "configure",
            Export::Provide => "provide",
            Export::CallTool => "call-tool",
            Export::SessionStart => "session-start",
            Export::UserPromptSubmit => "user-prompt-submit",
            Export::PreToolUse => "pre-tool-use",
            Export::PostToolUse => "post-tool-use",
            Export::Stop => "stop",
            Export::Command => "command",
            Export::Status => "status",
            Export::CompactorSpec => "spec",
            Export::Compact => "compact",
            Export::PreCompact => "pre-compact",
            Export::PostCompact => "post-compact",
            Export::ViewerShows => "shows",
            Export::View => "view",
            Export::JudgeSpec => "spec",
            Export::TurnEnd => "turn-end",
            Export::Review => "review",
            Export::Queued => "queued",
        }
    }

    /// The interface it belongs to.
    pub fn interface(self) -> Interface {
        match self {
            Export::CompactorSpec | Export::Compact | Export::PreCompact | Export::PostCompact => {
                Interface::Compactor
            }
            Export::ViewerShows | Export::View => Interface::Viewer,
            Export::JudgeSpec | Export::TurnEnd | Export::Review | Export::Queued => Interface::Judge,
            _ => Interface::Guest,
        }
    }

    /// Whether one of the calls every load makes (`manifest`, `configure`, and the optional
    /// interfaces' `spec` and `shows`), as opposed to a call a session makes.
    pub fn at_load(self) -> bool {
        matches!(
            self,
            Export::Manifest
                | Export::Configure
                | Export::CompactorSpec
                | Export::ViewerShows
                | Export::JudgeSpec
        )
    }
}

/// Where each export sits in one component; `None` for one its contract line lacks.
pub(super) struct ExportIndices([Option<ComponentExportIndex>; Export::ALL.len()]);

impl ExportIndices {
    /// Finds every export `line` has in `component`, whose `guest` interface is named
    /// `guest` and whose optional interfaces, those it exports, are named in `optional`;
    /// `Err` names the first one missing.
    pub(super) fn find(
        component: &Component,
        line: Line,
        guest: &str,
        optional: &[(Interface, String)],
    ) -> Result<Self, String> {
        let interface_index = |name: &str| {
            component
                .get_export_index(None, name)
                .ok_or_else(|| format!("the component does not export `{name}`"))
        };
        let guest_index = interface_index(guest)?;
        let mut interfaces = vec![(Interface::Guest, guest, guest_index)];
        for (interface, name) in optional {
            interfaces.push((*interface, name.as_str(), interface_index(name)?));
        }
        let mut found = [const { None }; Export::ALL.len()];
        for export in Export::ALL.into_iter().filter(|export| line.has(*export)) {
            let Some((_, name, interface)) = interfaces.iter().find(|(i, ..)| *i == export.interface())
            else {
                continue;
            };
            let index = component
                .get_export_index(Some(interface), export.wit_name())
                .ok_or_else(|| format!("`{name}` has no `{}` export", export.wit_name()))?;
            found[export as usize] = Some(index);
        }
        Ok(Self(found))
    }

    pub(super) fn get(&self, export: Export) -> Option<&ComponentExportIndex> {
        self.0[export as usize].as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_export_indexes_its_own_slot() {
        // `ExportIndices` and `CallCounts` index arrays by `export as usize`.
        for (slot, export) in Export::ALL.into_iter().enumerate() {
            assert_eq!(export as usize, slot, "{export:?}");
        }
    }
}
