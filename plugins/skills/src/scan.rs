//! Finding skills: every subfolder of a configured folder that holds a `SKILL.md`, read and
//! checked. A folder that does not exist (not granted, or not made) holds no skills; a
//! SKILL.md that breaks a rule is kept aside with the rules it breaks, and the rest still load.

use std::path::Path;

use agent_host_sdk::log;

use crate::catalog::{Catalog, Problem, Skill};
use crate::config::Root;
use crate::rules::{self, SkillFile};

/// The most bytes a SKILL.md may take: its body is a tool's result, which the host caps.
pub const MAX_SKILL_MD: u64 = 128 * 1024;
/// The most subfolders read in one configured folder, so a huge folder cannot stall a call.
pub const MAX_FOLDERS: usize = 256;

/// The skills under `roots` (earlier roots win a name), and which of `untrusted` exist.
pub fn scan(roots: &[Root], untrusted: &[Root]) -> Catalog {
    let mut catalog = Catalog::default();
    for root in roots {
        scan_root(root, &mut catalog);
    }
    catalog.untrusted =
        untrusted.iter().filter(|root| Path::new(&root.dir).is_dir()).map(|root| root.dir.clone()).collect();
    catalog
}

fn scan_root(root: &Root, catalog: &mut Catalog) {
    let entries = match std::fs::read_dir(&root.dir) {
        Ok(entries) => entries,
        Err(error) => {
            log::debug(&format!("no skills in {}: {error}", root.dir));
            return;
        }
    };
    let mut folders: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        // Hidden folders (`.git`, an editor's) are never skills: a name cannot start with `.`.
        .filter(|name| !name.starts_with('.'))
        .collect();
    folders.sort();
    if folders.len() > MAX_FOLDERS {
        catalog.problems.push(Problem {
            path: root.dir.clone(),
            rules: vec![format!(
                "it holds {} entries; only the first {MAX_FOLDERS} by name were read",
                folders.len()
            )],
        });
        folders.truncate(MAX_FOLDERS);
    }
    for folder in folders {
        let dir = format!("{}/{folder}", root.dir);
        match read_folder(&dir, &folder) {
            Found::NotASkill => {}
            Found::Broken(problem) => catalog.problems.push(problem),
            Found::Skill(file) => {
                if let Some(first) = catalog.skills.iter().find(|skill| skill.name == file.meta.name) {
                    log::info(&format!(
                        "{dir} is not used: the skill `{}` in {} comes first",
                        first.name, first.dir
                    ));
                    continue;
                }
                catalog.skills.push(Skill {
                    name: file.meta.name,
                    description: file.meta.description,
                    dir,
                    origin: root.origin,
                });
            }
        }
    }
}

/// What one subfolder is.
enum Found {
    /// A file, or a folder without a SKILL.md.
    NotASkill,
    Broken(Problem),
    Skill(SkillFile),
}

fn read_folder(dir: &str, folder: &str) -> Found {
    let path = Path::new(dir);
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Found::NotASkill,
        // The sandbox follows a link only while it stays inside the granted folder.
        Err(error) if is_link => {
            return Found::Broken(Problem {
                path: dir.to_owned(),
                rules: vec![format!(
                    "it is a symlink that cannot be followed ({error}); a link must stay inside the granted folder"
                )],
            });
        }
        Err(_) => return Found::NotASkill,
    }
    let skill_md = format!("{dir}/SKILL.md");
    if std::fs::symlink_metadata(&skill_md).is_err() {
        return Found::NotASkill;
    }
    match read_skill(Path::new(&skill_md), folder) {
        Ok(file) => Found::Skill(file),
        Err(rules) => Found::Broken(Problem { path: skill_md, rules }),
    }
}

/// Reads and checks the SKILL.md at `path`, in the folder named `folder`.
pub fn read_skill(path: &Path, folder: &str) -> Result<SkillFile, Vec<String>> {
    let meta = std::fs::metadata(path).map_err(|error| vec![format!("SKILL.md cannot be read: {error}")])?;
    if !meta.is_file() {
        return Err(vec!["SKILL.md is not a regular file".to_owned()]);
    }
    if meta.len() > MAX_SKILL_MD {
        return Err(vec![format!(
            "SKILL.md takes {} KiB, over the {} KiB a skill may take; move detail into references/",
            meta.len().div_ceil(1024),
            MAX_SKILL_MD / 1024
        )]);
    }
    let text = std::fs::read_to_string(path).map_err(|error| match error.kind() {
        std::io::ErrorKind::InvalidData => vec!["SKILL.md is not UTF-8 text".to_owned()],
        _ => vec![format!("SKILL.md cannot be read: {error}")],
    })?;
    rules::parse(&text, folder)
}
