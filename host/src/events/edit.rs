//! A file a tool call changed (contract 0.2.5, the `edits` import), as front ends show it: a
//! diff of its text before and after.

use schemars::JsonSchema;
use serde::Serialize;

/// One file a tool call changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FileEdit {
    /// The file as the tool names it to the model.
    pub path: String,
    /// Its text before the call; absent when the call created it, or when the texts were
    /// past the host's cap on one call's edits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// Its text after the call; absent when the call deleted it, or past the cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Whether the texts were left out for the cap: the file changed, but no diff is shown.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub texts_left_out: bool,
}

impl FileEdit {
    /// The bytes of its texts.
    pub fn text_bytes(&self) -> usize {
        self.before.as_ref().map_or(0, String::len) + self.after.as_ref().map_or(0, String::len)
    }
}
