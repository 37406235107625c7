//! `agent-host plugin update [NAME] [--accept]`: each `oci` plugin moved to the digest its tag
//! points at now, with what changed printed — the digest, the contract version, the signer
//! and every grant added or widened. An update that asks for more than the entry's
//! `[plugin.grants]` allows is not applied until the operator accepts it; accepted, the
//! entry's grants are widened in the config (its comments kept) along with the lock.

use std::path::Path;

use anyhow::Context as _;

use super::Status;
use super::plugin_add::accepted;
use agent_host::config::{Config, PluginConfig, PluginOrigin};
use agent_host::oci::{DeclaredGrants, LockedPlugin, Lockfile, fetched, resolve};

/// `agent-host plugin update [NAME] [--accept]`.
pub async fn update(name: Option<&str>, accept: bool, config_file: &Path) -> anyhow::Result<Status> {
    let config = Config::load(config_file)?;
    let lock_path = config.lock_path();
    let mut lock = Lockfile::read(&lock_path)?;
    let chosen: Vec<(usize, &PluginConfig, &str)> = config
        .plugins
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| match entry.origin() {
            PluginOrigin::Oci(reference) => Some((index, entry, reference)),
            PluginOrigin::Path(_) | PluginOrigin::Builtin(_) => None,
        })
        .filter(|(_, _, reference)| name.is_none_or(|name| names(reference, name)))
        .collect();
    if chosen.is_empty() {
        anyhow::bail!(
            "{} has no `oci` plugin{}: `agent-host plugin add REF` adds one",
            config_file.display(),
            name.map(|name| format!(" named {name}")).unwrap_or_default()
        );
    }
    let mut status = Status::Done;
    for (index, entry, reference) in chosen {
        let newer = resolve(reference, &config).await?;
        let Some(older) = lock.get(reference).cloned() else {
            anyhow::bail!(
                "{reference} is not pinned in {}: `agent-host plugin add {reference}`",
                lock_path.display()
            );
        };
        if older.manifest == newer.manifest {
            println!("{reference}: up to date at {}", older.manifest);
            continue;
        }
        show_changes(&older, &newer);
        let beyond = newer.grants.missing_from(&entry.grants);
        if !beyond.is_empty() {
            println!(
                "  it asks for more than plugin[{index}]'s [plugin.grants] allows: {}",
                beyond.join("; ")
            );
            if !accepted(accept)? {
                println!("  not updated: {reference} stays at {}", older.manifest);
                status = Status::BadInput;
                continue;
            }
            widen_grants(config_file, index, &newer.grants)?;
            println!("  plugin[{index}]'s grants widened in {}", config_file.display());
        }
        fetched(&newer, &config).await?;
        lock.pin(newer.clone());
        lock.write(&lock_path)?;
        println!("  pinned at {} in {}", newer.manifest, lock_path.display());
    }
    Ok(status)
}

/// Whether `name` picks `reference`: the whole reference, or its repository's last part.
fn names(reference: &str, name: &str) -> bool {
    let repository =
        reference.rsplit_once(':').filter(|(_, tag)| !tag.contains('/')).map_or(reference, |(r, _)| r);
    reference == name || repository == name || repository.rsplit('/').next() == Some(name)
}

/// What moved between the pinned version and the tag's.
fn show_changes(older: &LockedPlugin, newer: &LockedPlugin) {
    println!("{}", newer.reference);
    println!("  digest    {} -> {}", older.manifest, newer.manifest);
    if older.contract != newer.contract {
        println!("  contract  {} -> {}", older.contract, newer.contract);
    }
    if older.signer != newer.signer {
        println!("  signer    {} -> {}", older.signer, newer.signer);
    }
    let widened = older.grants.widened_by(&newer.grants);
    if widened.is_empty() {
        println!("  grants    nothing added or widened");
    }
    for grant in widened {
        println!("  grant +   {grant}");
    }
}

/// The `index`th `[[plugin]]` entry of the file granted at least `declared`, the rest of
/// the file (comments, order) as it was. A folder it did not have is backed by `CHOOSE`,
/// which no folder is, so the load refuses it until the operator picks one.
fn widen_grants(config_file: &Path, index: usize, declared: &DeclaredGrants) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(config_file).with_context(|| format!("reading {}", config_file.display()))?;
    let mut document: toml_edit::DocumentMut =
        text.parse().with_context(|| format!("parsing {}", config_file.display()))?;
    let entry = document
        .get_mut("plugin")
        .and_then(|plugins| plugins.as_array_of_tables_mut())
        .and_then(|plugins| plugins.get_mut(index))
        .with_context(|| format!("{} has no plugin[{index}]", config_file.display()))?;
    let grants = entry
        .entry("grants")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .context("plugin.grants is not a table")?;
    for flag in declared.flags_set() {
        grants.insert(flag, toml_edit::value(true));
    }
    for (key, wanted) in [("read_state", &declared.read_state), ("env", &declared.env)] {
        let list = grants.entry(key).or_insert(toml_edit::value(toml_edit::Array::new()));
        let array = list.as_array_mut().with_context(|| format!("plugin.grants.{key} is not a list"))?;
        for item in wanted {
            if !array.iter().any(|have| have.as_str() == Some(item)) {
                array.push(item.as_str());
            }
        }
    }
    if !declared.dirs.is_empty() {
        let dirs = grants
            .entry("dirs")
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_like_mut()
            .context("plugin.grants.dirs is not a table")?;
        for (guest, dir) in &declared.dirs {
            let grant = dirs.entry(guest).or_insert_with(|| {
                let mut grant = toml_edit::InlineTable::new();
                grant.insert("host", "CHOOSE".into());
                toml_edit::value(grant)
            });
            if dir.write {
                let grant =
                    grant.as_table_like_mut().with_context(|| format!("dirs.\"{guest}\" is not a table"))?;
                grant.insert("write", toml_edit::value(true));
            }
        }
    }
    std::fs::write(config_file, document.to_string())
        .with_context(|| format!("writing {}", config_file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_picks_the_reference_its_repository_or_the_repositorys_last_part() {
        assert!(names("127.0.0.1:5000/team/modes:1", "modes"));
        assert!(names("127.0.0.1:5000/team/modes:1", "127.0.0.1:5000/team/modes"));
        assert!(names("127.0.0.1:5000/team/modes:1", "127.0.0.1:5000/team/modes:1"));
        assert!(!names("127.0.0.1:5000/team/modes:1", "team"));
        assert!(!names("127.0.0.1:5000/team/modes:1", "mode"));
    }

    #[test]
    fn widening_keeps_the_files_comments_and_adds_only_what_was_declared() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let text = "# the deployment\n[[plugin]]\npath = \"a.wasm\"\n\n# ours\n[[plugin]]\noci = \"r/p:1\"\n\
                    [plugin.grants]\nread_state = [\"x\"]  # kept\n";
        std::fs::write(&file, text).unwrap();
        let declared: DeclaredGrants =
            toml::from_str("read_state = [\"x\", \"y\"]\nprocess = true\n[dirs.\"/w\"]\nwrite = true\n")
                .unwrap();
        widen_grants(&file, 1, &declared).unwrap();
        let written = std::fs::read_to_string(&file).unwrap();
        assert!(
            written.starts_with("# the deployment\n[[plugin]]\npath = \"a.wasm\"\n\n# ours\n"),
            "{written}"
        );
        assert!(written.contains("# kept"), "{written}");
        let parsed: toml::Table = toml::from_str(&written).unwrap();
        let grants = &parsed["plugin"][1]["grants"];
        assert_eq!(grants["read_state"].as_array().unwrap().len(), 2, "{written}");
        assert_eq!(grants["process"].as_bool(), Some(true));
        assert_eq!(grants["dirs"]["/w"]["host"].as_str(), Some("CHOOSE"));
        assert_eq!(grants["dirs"]["/w"]["write"].as_bool(), Some(true));
        assert!(parsed["plugin"][0].get("grants").is_none(), "{written}");
    }
}
