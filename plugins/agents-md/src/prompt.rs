//! What the plugin adds to the system prompt: each AGENTS.md offered under a heading that
//! names its folder and says where it applies, the root's first; a cut file said to be cut,
//! and the files left out named.

use std::fmt::Write as _;

use crate::scan::{Scan, file_path};

/// The section's heading and how the files relate, as the convention has it.
const INTRO: &str = "## Project instructions (AGENTS.md)\n\n\
The workspace's AGENTS.md files, as the project wrote them. Each applies to the files under \
its folder. Where two disagree, the one in the deeper folder takes precedence for the files \
under it.\n";

/// The most files the closing line names when the cap left some out.
const NAMED_LEFT_OUT: usize = 20;

/// The section for `scan`, or none when no file is offered. `max_kb` is the cap, to name it.
pub fn text(scan: &Scan, max_kb: u32) -> Option<String> {
    if scan.files.is_empty() && scan.left_out.is_empty() {
        return None;
    }
    let mut text = INTRO.to_owned();
    for file in &scan.files {
        let path = file_path(&file.folder);
        let _ = write!(text, "\n### {}\n\n{}\n", heading(&file.folder), file.text.trim_end());
        if file.cut {
            let _ = writeln!(
                text,
                "\n[`{path}` is cut here: {} of its {} bytes are shown, the most the {max_kb} KiB cap \
                 (`max_kb`) left room for. Read the file for the rest.]",
                file.text.len(),
                file.size
            );
        }
    }
    if !scan.left_out.is_empty() {
        let named: Vec<String> =
            scan.left_out.iter().take(NAMED_LEFT_OUT).map(|path| format!("`{path}`")).collect();
        let more = scan.left_out.len() - named.len();
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        let _ = writeln!(
            text,
            "\nNot shown, past the {max_kb} KiB cap (`max_kb`): {}{more}. They apply to the files \
             under their folders all the same: read one before working there.",
            named.join(", ")
        );
    }
    Some(text)
}

/// The heading of the AGENTS.md in `folder`: which it is and where it applies.
fn heading(folder: &str) -> String {
    if folder.is_empty() {
        "`AGENTS.md` (the workspace root): applies to every file in the workspace".to_owned()
    } else {
        format!(
            "`{folder}/AGENTS.md`: applies to the files under `{folder}/`, and takes precedence there \
             over the AGENTS.md files above it"
        )
    }
}
