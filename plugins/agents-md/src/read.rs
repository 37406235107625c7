//! Reading one AGENTS.md within what is left of the cap: through a link only while it stays
//! in the workspace, a regular file only, UTF-8 text only, and no more bytes than may be
//! offered, so a huge file costs no more than its share.

use std::io::Read as _;
use std::path::Path;

use crate::confine;
use crate::walk::FILE_NAME;

/// One file's text, as much of it as may be offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub text: String,
    /// The file's whole size, in bytes.
    pub size: u64,
    /// Whether `text` is less than the file: the cap was reached.
    pub cut: bool,
    /// Where the file really lies, relative to the workspace (a link followed).
    pub real: Vec<String>,
}

/// The AGENTS.md in `folder` (relative to `root`), at most `budget` bytes of it; a cut text
/// ends at the last whole line that fits. The error says what is wrong with the file.
pub fn read(root: &Path, folder: &str, budget: usize) -> Result<Text, String> {
    let mut parts: Vec<String> =
        folder.split('/').filter(|part| !part.is_empty()).map(str::to_owned).collect();
    parts.push(FILE_NAME.to_owned());
    let real = confine::resolve(root, &parts)?;
    let at = root.join(real.join("/"));
    let cannot = |error: std::io::Error| format!("it cannot be read ({error})");
    let meta = std::fs::metadata(&at).map_err(cannot)?;
    if meta.is_dir() {
        return Err("it is a folder, not a file".to_owned());
    }
    // A FIFO would wait for a writer forever, and a device is no file to read.
    if !meta.is_file() {
        return Err("it is not a regular file".to_owned());
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(&at).map_err(cannot)?;
    // One byte past the budget tells a file that fits from one that does not.
    file.take(budget as u64 + 1).read_to_end(&mut bytes).map_err(cannot)?;
    let cut = bytes.len() > budget;
    bytes.truncate(budget);
    let mut text = utf8(bytes, cut)?;
    if cut {
        // Half a line reads as an instruction it never was.
        text.truncate(text.rfind('\n').map_or(0, |end| end + 1));
    }
    Ok(Text { text, size: meta.len(), cut, real })
}

/// `bytes` as text; a cut may have split the last character, which is dropped.
fn utf8(bytes: Vec<u8>, cut: bool) -> Result<String, String> {
    String::from_utf8(bytes).or_else(|error| {
        let valid = error.utf8_error();
        if cut && valid.error_len().is_none() {
            let mut bytes = error.into_bytes();
            bytes.truncate(valid.valid_up_to());
            String::from_utf8(bytes).map_err(|_| not_utf8())
        } else {
            Err(not_utf8())
        }
    })
}

fn not_utf8() -> String {
    "it is not UTF-8 text".to_owned()
}
