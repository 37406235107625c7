//! What the `skills` and `subagents` plugins do alike with the files they find in their
//! granted folders: each entry found is the operator's or the project's ([`Origin`]), and a
//! file that cannot be used is skipped and reported by path with every rule it breaks
//! ([`Problem`]). What a file is, and the rules it is held to, stay each plugin's own.

mod origin;
mod problem;

pub use origin::Origin;
pub use problem::Problem;
