//! `agent-host plugin verify`: every `oci` plugin of the deployment checked as a load would
//! check it — pinned in the lock, its declared grants granted, its component's bytes hashing
//! to the pinned digest (fetched when not cached), its trust policy met — each failure named.

use std::path::Path;

use super::Status;
use agent_host::config::{Config, PluginOrigin};
use agent_host::oci::{Lockfile, fetched};

/// `agent-host plugin verify`: `Status::Failed` (exit 1) when any plugin fails.
pub async fn verify(config_file: &Path) -> anyhow::Result<Status> {
    let config = Config::load(config_file)?;
    let lock_path = config.lock_path();
    let lock = Lockfile::read(&lock_path)?;
    let mut failures = 0;
    let mut checked = 0;
    for (index, entry) in config.plugins.iter().enumerate() {
        let PluginOrigin::Oci(reference) = entry.origin() else { continue };
        checked += 1;
        let Some(locked) = lock.get(reference) else {
            failures += 1;
            println!("FAIL  plugin[{index}] {reference}: not pinned in {}", lock_path.display());
            continue;
        };
        let missing = locked.grants.missing_from(&entry.grants);
        if !missing.is_empty() {
            failures += 1;
            println!(
                "FAIL  plugin[{index}] {reference}: declares grants its entry lacks: {}",
                missing.join("; ")
            );
            continue;
        }
        match fetched(locked, &config).await {
            Ok(_) => println!(
                "ok    plugin[{index}] {reference} at {} (signer {})",
                locked.manifest, locked.signer
            ),
            Err(error) => {
                failures += 1;
                println!("FAIL  plugin[{index}] {reference}: {error}");
            }
        }
    }
    for locked in &lock.plugins {
        if !config.plugins.iter().any(|entry| entry.origin() == PluginOrigin::Oci(&locked.reference)) {
            println!("note  {} is pinned in {} but no entry names it", locked.reference, lock_path.display());
        }
    }
    println!("{checked} plugin(s) from registries checked, {failures} failed");
    Ok(if failures == 0 { Status::Done } else { Status::Failed })
}
