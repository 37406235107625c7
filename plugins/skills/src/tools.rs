//! `load_skill` and `read_skill_resource`: a skill's instructions with the list of its files,
//! and one of those files, confined to the skill's folder. Both find the skill in the
//! session's catalog, so only a skill that was found, trusted and valid can be read.

use std::fmt::Write as _;
use std::path::Path;

use agent_host_sdk::Context;
use folder_catalog::FolderCatalog;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::catalog::{Catalog, Skill};
use crate::config::Config;
use crate::{confine, files, loaded, scan};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadArgs {
    /// The skill's name, as the list of skills gives it
    name: String,
}

/// The skill's body (its SKILL.md after the frontmatter) and its files; the call is noted, so
/// that its result is pinned against compaction.
pub fn load_skill(ctx: &Context<Config>, args: LoadArgs) -> Result<String, String> {
    let catalog = Catalog::current(&ctx.config)?;
    let skill = catalog.find(args.name.trim())?;
    let skill_md = format!("{}/SKILL.md", skill.dir);
    // Read again: the catalog holds the description, and the file may have changed since.
    let file = scan::read_skill(Path::new(&skill_md), &skill.name).map_err(|rules| {
        format!("the skill `{}` cannot be loaded now: {skill_md}: {}", skill.name, rules.join("; "))
    })?;
    loaded::remember(&skill.name, ctx.call_id.as_deref())?;
    Ok(loaded_text(skill, &file.body))
}

fn loaded_text(skill: &Skill, body: &str) -> String {
    let mut text = format!("# Skill `{}`\n\n", skill.name);
    text.push_str(if body.is_empty() {
        "(This skill has no instructions beyond its description.)"
    } else {
        body
    });
    let (entries, more) = files::list(Path::new(&skill.dir));
    let entries: Vec<_> = entries.into_iter().filter(|entry| entry.path != "SKILL.md").collect();
    if !entries.is_empty() {
        let _ = write!(
            text,
            "\n\n## Files of `{}`\n\nRead one with `read_skill_resource` (skill `{}`, the path as listed); \
             run one under scripts/ with `run_skill_script`.\n",
            skill.name, skill.name
        );
        for entry in &entries {
            let _ = writeln!(text, "- {}", entry.path);
        }
        if more {
            let _ = writeln!(text, "- … more files not listed");
        }
    }
    text
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceArgs {
    /// The skill's name
    skill: String,
    /// A file of the skill, relative to its folder, such as references/forms.md
    path: String,
}

/// One text file of a skill, at most `max_file_kb`.
pub fn read_skill_resource(ctx: &Context<Config>, args: ResourceArgs) -> Result<String, String> {
    let catalog = Catalog::current(&ctx.config)?;
    let skill = catalog.find(args.skill.trim())?;
    let in_skill = |why: String| format!("skill `{}`: {why}", skill.name);
    let (at, _) = confine::file_in(Path::new(&skill.dir), &args.path).map_err(in_skill)?;
    confine::read_text(&at, args.path.trim(), ctx.config.max_file_bytes()).map_err(in_skill)
}
