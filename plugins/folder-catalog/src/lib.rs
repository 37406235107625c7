//! What the `skills` and `subagents` plugins do alike with what they find in their granted
//! folders. The catalog ([`FolderCatalog`]) is found once a session and kept in its state:
//! [`session_start`] finds it, [`provide`] offers it in the system prompt from the state,
//! each entry on a line while the budget lasts ([`budgeted_listing`]). Each entry found is
//! the operator's or the project's ([`Origin`]); a file that cannot be used is skipped and
//! reported by path with every rule it breaks ([`Problem`], [`report_skipped`]), and a
//! project folder left unread because it is not trusted is logged ([`report_untrusted`]).
//! The settings that name the folders are checked in the same words ([`granted_folder`],
//! [`no_repeats`]). What a file is, and the rules it is held to, stay each plugin's own.

mod folders;
mod kept;
mod listing;
mod origin;
mod problem;
mod report;
mod session;

// The tests run natively.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

pub use folders::{granted_folder, no_repeats};
pub use kept::FolderCatalog;
pub use listing::budgeted_listing;
pub use origin::Origin;
pub use problem::Problem;
pub use report::{report_skipped, report_untrusted};
pub use session::{provide, session_start};
