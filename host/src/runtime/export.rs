//! The exports of the `guest` interface, and where each sits in one plugin's component:
//! looked up once per load, so a call finds the one export it needs without a name lookup.

use wasmtime::component::{Component, ComponentExportIndex};

/// The `guest` interface as the host names it; a component built against an older
/// compatible contract version (0.1.x) is found under it too.
const GUEST_INTERFACE: &str = "agent-host:plugin/guest@0.1.2";

/// One export of the `guest` interface.
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
}

impl Export {
    pub const ALL: [Export; 10] = [
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
        }
    }
}

/// Where each export sits in one component.
pub(super) struct ExportIndices([ComponentExportIndex; Export::ALL.len()]);

impl ExportIndices {
    /// Finds every export of `component`; `Err` names the first one missing.
    pub(super) fn find(component: &Component) -> Result<Self, String> {
        let guest = component
            .get_export_index(None, GUEST_INTERFACE)
            .ok_or_else(|| format!("the component does not export `{GUEST_INTERFACE}`"))?;
        let mut found = Vec::with_capacity(Export::ALL.len());
        for export in Export::ALL {
            let index = component
                .get_export_index(Some(&guest), export.wit_name())
                .ok_or_else(|| format!("`{GUEST_INTERFACE}` has no `{}` export", export.wit_name()))?;
            found.push(index);
        }
        Ok(Self(found.try_into().unwrap_or_else(|_| unreachable!("one index per export"))))
    }

    pub(super) fn get(&self, export: Export) -> &ComponentExportIndex {
        &self.0[export as usize]
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
