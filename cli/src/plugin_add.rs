//! `agent-host plugin add REF`: the tag's manifest read (never a blob), its trust policy met,
//! what it asks for shown; once accepted, its digest pinned in `plugins.lock` and its
//! `[[plugin]]` entry appended to the config with the grants it declares — the file's own
//! text and comments kept — then its component fetched, verified and cached.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::Path;

use anyhow::Context as _;

use super::Status;
use agent_host::config::{Config, PluginOrigin};
use agent_host::oci::{DeclaredGrants, LockedPlugin, Lockfile, UNSIGNED, fetched, resolve};

/// `agent-host plugin add REF [--accept]`.
pub async fn add(reference: &str, accept: bool, config_file: &Path) -> anyhow::Result<Status> {
    let config = Config::load(config_file)?;
    let locked = resolve(reference, &config).await?;
    show(&locked);
    if !accepted(accept)? {
        eprintln!("not added: nothing was written");
        return Ok(Status::BadInput);
    }
    let entry_exists = config.plugins.iter().any(|plugin| plugin.origin() == PluginOrigin::Oci(reference));
    if !entry_exists {
        let mut text = std::fs::read_to_string(config_file)
            .with_context(|| format!("reading {}", config_file.display()))?;
        if !text.ends_with('\n') && !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&entry_text(reference, &locked.grants));
        std::fs::write(config_file, text).with_context(|| format!("writing {}", config_file.display()))?;
    }
    let lock_path = config.lock_path();
    let mut lock = Lockfile::read(&lock_path)?;
    lock.pin(locked.clone());
    lock.write(&lock_path)?;
    let component = fetched(&locked, &config).await?;
    println!("pinned     {reference} at {} in {}", locked.manifest, lock_path.display());
    if entry_exists {
        println!("config     {} already has its [[plugin]] entry", config_file.display());
    } else {
        println!("config     [[plugin]] oci = \"{reference}\" added to {}", config_file.display());
    }
    println!("cached     {}", component.display());
    if !locked.grants.dirs.is_empty() {
        println!(
            "edit       choose the host folder of each granted dir (host = \"CHOOSE\") in {}",
            config_file.display()
        );
    }
    Ok(Status::Done)
}

/// What the operator accepts.
fn show(locked: &LockedPlugin) {
    println!("plugin     {}", locked.reference);
    println!("manifest   {}", locked.manifest);
    println!("component  {}", locked.layer);
    println!("contract   {}", locked.contract);
    println!("exports    {}", locked.exports.join(", "));
    println!(
        "signed by  {}",
        if locked.signer == UNSIGNED { "nobody (trust = \"digest\")" } else { locked.signer.as_str() }
    );
    println!("asks for   {}", locked.grants.summary());
}

/// `--accept`, or a `y` at a terminal; `Err` at no terminal without `--accept`.
pub fn accepted(accept: bool) -> anyhow::Result<bool> {
    if accept {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        anyhow::bail!("nobody can be asked to accept it here (no terminal): pass --accept to accept it");
    }
    print!("accept and pin it? [y/N] ");
    std::io::stdout().flush().ok();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).context("reading the answer")?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// The `[[plugin]]` entry for `reference` with `grants`, as text to append.
pub fn entry_text(reference: &str, grants: &DeclaredGrants) -> String {
    let mut text = format!(
        "\n# Added by `agent-host plugin add`; pinned in plugins.lock.\n[[plugin]]\noci = \"{reference}\"\n"
    );
    if grants.is_empty() {
        return text;
    }
    text.push_str("[plugin.grants]\n");
    if !grants.read_state.is_empty() {
        text.push_str(&format!("read_state = {}\n", toml_list(&grants.read_state)));
    }
    for flag in grants.flags_set() {
        text.push_str(&format!("{flag} = true\n"));
    }
    if !grants.env.is_empty() {
        text.push_str(&format!("env = {}\n", toml_list(&grants.env)));
    }
    if !grants.dirs.is_empty() {
        text.push_str("# Choose the host folder each of these guest paths shows (CHOOSE is no folder).\n");
        for (guest, dir) in &grants.dirs {
            text.push_str(&format!(
                "dirs.{} = {{ host = \"CHOOSE\", write = {} }}\n",
                toml_string(guest),
                dir.write
            ));
        }
    }
    text
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

fn toml_list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|item| toml_string(item)).collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_added_entry_parses_with_the_grants_it_declares() {
        let grants: DeclaredGrants =
            toml::from_str("read_state = [\"lamp\"]\nprocess = true\n[dirs.\"/workspace\"]\nwrite = true\n")
                .unwrap();
        let text = entry_text("127.0.0.1:5000/p:1", &grants);
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        let entry = &parsed["plugin"][0];
        assert_eq!(entry["oci"].as_str(), Some("127.0.0.1:5000/p:1"));
        assert_eq!(entry["grants"]["dirs"]["/workspace"]["host"].as_str(), Some("CHOOSE"));
        assert_eq!(entry["grants"]["process"].as_bool(), Some(true));
        assert!(text.contains("# Choose the host folder"), "{text}");
    }
}
