//! `/agents-md`'s answer: what a reading offers, cuts, leaves out and skips, for the operator.

use std::fmt::Write as _;

use crate::scan::{Scan, file_path};

/// The reading as plain lines, the files in the order they are offered.
pub fn plain(scan: &Scan, max_kb: u32) -> String {
    let bytes: usize = scan.files.iter().map(|file| file.text.len()).sum();
    let mut text = match scan.files.len() {
        0 => "no AGENTS.md offered".to_owned(),
        1 => format!("1 AGENTS.md offered ({bytes} bytes of the {max_kb} KiB cap):"),
        count => {
            format!("{count} AGENTS.md files offered, in this order ({bytes} bytes of the {max_kb} KiB cap):")
        }
    };
    for file in &scan.files {
        let path = file_path(&file.folder);
        if file.cut {
            let _ = write!(text, "\n  {path} (cut: {} of {} bytes)", file.text.len(), file.size);
        } else {
            let _ = write!(text, "\n  {path} ({} bytes)", file.size);
        }
    }
    if !scan.left_out.is_empty() {
        let _ = write!(text, "\nleft out, past the cap: {}", scan.left_out.join(", "));
    }
    for problem in &scan.problems {
        let _ = write!(text, "\n{}", problem.line());
    }
    text
}
