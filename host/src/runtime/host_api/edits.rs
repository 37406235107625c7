//! `edits.report` (contract 0.2.5).

use crate::events::FileEdit;
use crate::runtime::call::CallState;

/// What one call's edits may make the host hold, in bytes: what front ends show as diffs, so
/// a cap on what is shown, not a limit on what a tool may change. Past it an edit is kept
/// without its texts (the change is still told, and no call fails for having changed much);
/// once even that is past it, later edits are dropped.
pub const EDIT_BYTES_PER_CALL: usize = 1 << 20;

/// What an edit costs beyond its strings: so a flood of empty ones is bounded too.
const EDIT_RECORD_BYTES: usize = 64;

/// The edits a call reported, and the bytes they hold.
#[derive(Debug, Default)]
pub struct ReportedEdits {
    edits: Vec<FileEdit>,
    bytes: usize,
}

impl ReportedEdits {
    /// The edits, leaving none.
    pub fn take(&mut self) -> Vec<FileEdit> {
        self.bytes = 0;
        std::mem::take(&mut self.edits)
    }

    fn keep(&mut self, mut edit: FileEdit) {
        let cost = |edit: &FileEdit| EDIT_RECORD_BYTES + edit.path.len() + edit.text_bytes();
        if self.bytes + cost(&edit) > EDIT_BYTES_PER_CALL {
            (edit.before, edit.after, edit.texts_left_out) = (None, None, true);
        }
        if self.bytes + cost(&edit) <= EDIT_BYTES_PER_CALL {
            self.bytes += cost(&edit);
            self.edits.push(edit);
        }
    }
}

impl CallState {
    /// Keeps an edit the running call reports, for front ends once the call returns.
    pub fn report_edit(&mut self, path: String, before: Option<String>, after: Option<String>) {
        self.edits.keep(FileEdit { path, before, after, texts_left_out: false });
    }
}
