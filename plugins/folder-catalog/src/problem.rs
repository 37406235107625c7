//! A file a plugin skipped, and every problem it has: what skills and agent definitions
//! report alike, by path, so the operator knows which file to fix.

use serde::{Deserialize, Serialize};

/// A file (or folder) that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The file (or folder), as the plugin's sandbox names it.
    pub path: String,
    pub rules: Vec<String>,
}

impl Problem {
    /// One line for the operator.
    pub fn line(&self) -> String {
        format!("skipped {}: {}", self.path, self.rules.join("; "))
    }
}
