//! The exports of the `guest` interface (and, since contract 0.2.3, of the optional
//! `compactor` interface), and where each sits in one plugin's component: looked up once per
//! load, so a call finds the one export it needs without a name lookup.

use wasmtime::component::{Component, ComponentExportIndex};

use super::contract::Line;

/// One export of the `guest` interface, or of the `compactor` interface.
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
}

impl Export {
    pub const ALL: [Export; 15] = [
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
        }
    }

    /// Whether it belongs to the `compactor` interface, which a component may leave out.
    pub fn in_compactor(self) -> bool {
        matches!(self, Export::CompactorSpec | Export::Compact | Export::PreCompact | Export::PostCompact)
    }
}

/// Where each export sits in one component; `None` for one its contract line lacks.
pub(super) struct ExportIndices([Option<ComponentExportIndex>; Export::ALL.len()]);

impl ExportIndices {
    /// Finds every export `line` has in `component`, whose `guest` interface is named
    /// `guest` and whose `compactor` interface, when it exports one, `compactor`; `Err` names
    /// the first one missing.
    pub(super) fn find(
        component: &Component,
        line: Line,
        guest: &str,
        compactor: Option<&str>,
    ) -> Result<Self, String> {
        let interface_index = |name: &str| {
            component
                .get_export_index(None, name)
                .ok_or_else(|| format!("the component does not export `{name}`"))
        };
        let guest_index = interface_index(guest)?;
        let compactor_index =
            compactor.map(|name| interface_index(name).map(|index| (name, index))).transpose()?;
        let mut found = [const { None }; Export::ALL.len()];
        for export in Export::ALL.into_iter().filter(|export| line.has(*export)) {
            let (name, interface) = match (export.in_compactor(), &compactor_index) {
                (false, _) => (guest, &guest_index),
                (true, Some((name, index))) => (*name, index),
                (true, None) => continue,
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
