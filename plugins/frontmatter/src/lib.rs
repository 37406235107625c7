//! Markdown files that open with YAML frontmatter (a SKILL.md, an agent's definition): the
//! file split into its frontmatter and its body ([`split`]), then the frontmatter read field
//! by field ([`Fields`]), each error a sentence that names the field and says what it should
//! be, so a reader can report every rule a file breaks at once. Shared by the `skills` and
//! `subagents` plugins, which judge the fields each by its own format's rules.

mod fields;
mod split;

#[cfg(test)]
mod tests;

pub use fields::{Fields, kind, not_a_string};
pub use split::{Split, split};
pub use yaml_rust2::Yaml;
