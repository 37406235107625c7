//! `agent-host plugin list`: every plugin the deployment names, with where it comes from, the
//! digest it runs, who vouches for it, the contract version it targets and what it is granted.

use std::path::Path;

use super::Status;
use agent_host::config::{Config, PluginConfig, PluginOrigin, PluginSource};
use agent_host::oci::{DeclaredGrants, Lockfile, UNSIGNED, sha256_digest};
use agent_host::plugins::{builtin, describe};

/// `agent-host plugin list`.
pub async fn list(config_file: &Path) -> anyhow::Result<Status> {
    let config = Config::load(config_file)?;
    let lock = Lockfile::read(&config.lock_path())?;
    let engine = agent_host::plugins::engine()?;
    let cache_dir = config.resolve(&config.runtime.cache_dir);
    for (index, entry) in config.plugins.iter().enumerate() {
        let off = if entry.enabled { "" } else { " (disabled)" };
        println!("plugin[{index}]  {}{off}", entry.origin_label());
        let (digest, signer, contract) = match entry.origin() {
            PluginOrigin::Oci(reference) => match lock.get(reference) {
                Some(locked) => (
                    format!("{} (component {})", locked.manifest, locked.layer),
                    if locked.signer == UNSIGNED {
                        "none (pinned by digest)".to_owned()
                    } else {
                        locked.signer.clone()
                    },
                    locked.contract.clone(),
                ),
                None => {
                    ("not pinned: `agent-host plugin add` pins it".to_owned(), "-".to_owned(), "-".to_owned())
                }
            },
            PluginOrigin::Builtin(name) => {
                let digest = builtin::component(name).map_or_else(|| "not carried".to_owned(), sha256_digest);
                let contract = component_contract(&engine, entry, &config, &cache_dir).await;
                (digest, "this binary".to_owned(), contract)
            }
            PluginOrigin::Path(path) => {
                let path = config.resolve(path);
                match PluginSource::of(&path) {
                    Some(PluginSource::Component) => {
                        let digest = std::fs::read(&path)
                            .map_or_else(|error| error.to_string(), |bytes| sha256_digest(&bytes));
                        let contract = component_contract(&engine, entry, &config, &cache_dir).await;
                        (digest, "none (a local file)".to_owned(), contract)
                    }
                    _ => (
                        "built from source at load".to_owned(),
                        "none (a local folder)".to_owned(),
                        "-".to_owned(),
                    ),
                }
            }
        };
        println!("  digest    {digest}");
        println!("  signer    {signer}");
        println!("  contract  {contract}");
        println!("  grants    {}", DeclaredGrants::of_granted(&entry.grants).summary());
    }
    Ok(Status::Done)
}

/// The contract version of a component the entry names, from the component itself.
async fn component_contract(
    engine: &agent_host::runtime::SandboxEngine,
    entry: &PluginConfig,
    config: &Config,
    cache_dir: &Path,
) -> String {
    let path = match entry.origin() {
        PluginOrigin::Builtin(name) => builtin::materialise(name, cache_dir),
        PluginOrigin::Path(path) => Ok(config.resolve(path)),
        PluginOrigin::Oci(_) => return "-".to_owned(),
    };
    match path {
        Ok(path) => describe(engine, &path, cache_dir)
            .await
            .map_or_else(|error| format!("unknown ({error})"), |description| description.contract),
        Err(error) => format!("unknown ({error})"),
    }
}
