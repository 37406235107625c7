//! Where a catalog's entry was found: the operator's folders or the project's, the one thing
//! that decides whether it is trusted.

use serde::{Deserialize, Serialize};

/// Where an entry (a skill, an agent) was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Under the workspace: the repository's, used only with `trust_project`.
    Project,
    /// One of the operator's folders (`user_dirs`, `dirs`): the operator's own.
    User,
}

impl Origin {
    /// The word the listings show it by.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Project => "project",
            Origin::User => "user",
        }
    }
}
