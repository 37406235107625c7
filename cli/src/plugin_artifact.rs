//! `agent-host plugin build` and `plugin publish`: a plugin folder built (in the sandbox, as a
//! load builds it) or a `.wasm` taken, described, and pushed with the annotations a host
//! reads before pulling it.

use std::path::Path;

use anyhow::Context as _;

use super::Status;
use agent_host::config::{Config, PluginSource, RegistryConfig};
use agent_host::oci::{DeclaredGrants, PluginAnnotations, declared_in_folder, sha256_digest};
use agent_host::plugins::{BuildSandbox, describe, resolve_component};

/// A component ready to publish, and what its artifact carries.
pub struct Built {
    pub bytes: Vec<u8>,
    pub digest: String,
    pub label: String,
    pub annotations: PluginAnnotations,
}

/// Builds `path` (a folder) or takes it (a `.wasm`) and describes it.
pub async fn built(path: &Path) -> anyhow::Result<Built> {
    if PluginSource::of(path).is_none() {
        anyhow::bail!("no plugin at {}: expected {}", path.display(), PluginSource::EXPECTED);
    }
    let mut grants: DeclaredGrants = declared_in_folder(path).map_err(anyhow::Error::msg)?;
    let folder = path.to_path_buf();
    let component = tokio::task::spawn_blocking(move || {
        let sandbox = BuildSandbox::confined().context("a plugin folder is built in the OS sandbox")?;
        resolve_component(&folder, &sandbox, &|line| eprintln!("  {line}")).map_err(anyhow::Error::from)
    })
    .await
    .context("the build was interrupted")??;
    let bytes = std::fs::read(&component).with_context(|| format!("reading {}", component.display()))?;
    let engine = agent_host::plugins::engine()?;
    // The cache's key is kept beside its folder, so the folder is one inside the scratch
    // folder: both go when it does.
    let scratch = tempfile::tempdir().context("a scratch compile cache")?;
    let description = describe(&engine, &component, &scratch.path().join("cache")).await?;
    // The powers its exports hold are grants it needs, declared or not.
    for power in &description.powers {
        match *power {
            "review" => grants.review = true,
            "start_turns" => grants.start_turns = true,
            _ => {}
        }
    }
    Ok(Built {
        digest: sha256_digest(&bytes),
        bytes,
        label: description.label,
        annotations: PluginAnnotations {
            contract: description.contract,
            exports: description.exports.iter().map(|name| (*name).to_owned()).collect(),
            grants,
        },
    })
}

/// What `build` and `publish` print about a component.
fn show(built: &Built) {
    println!("plugin     {}", built.label);
    println!("component  {} ({} bytes)", built.digest, built.bytes.len());
    println!("contract   {}", built.annotations.contract);
    println!("exports    {}", built.annotations.exports.join(", "));
    println!("grants     {}", built.annotations.grants.summary());
    println!("annotations:");
    for (key, value) in built.annotations.to_map() {
        println!("  {key} = {value}");
    }
}

/// `agent-host plugin build PATH [--out FILE]`.
pub async fn build(path: &Path, out: Option<&Path>) -> anyhow::Result<Status> {
    let built = built(path).await?;
    show(&built);
    if let Some(out) = out {
        std::fs::write(out, &built.bytes).with_context(|| format!("writing {}", out.display()))?;
        println!("written    {}", out.display());
    }
    Ok(Status::Done)
}

/// `agent-host plugin publish PATH REF [--sign KEY]`.
pub async fn publish(
    path: &Path,
    reference: &str,
    sign: Option<&Path>,
    config_file: &Path,
) -> anyhow::Result<Status> {
    let registries = registries_of(config_file)?;
    let built = built(path).await?;
    show(&built);
    let published =
        agent_host::oci::publish(reference, built.bytes.clone(), &built.annotations, &registries).await?;
    println!("pushed     {reference}");
    println!("manifest   {}", published.manifest_digest);
    if let Some(key) = sign {
        agent_host::oci::sign(reference, &published.manifest_digest, key, &registries).await?;
        println!("signed     with {}", key.display());
    }
    Ok(Status::Done)
}

/// The `[plugins]` settings of the config at `config_file`, when there is one: publishing
/// needs no deployment, but one may name a registry's login.
fn registries_of(config_file: &Path) -> anyhow::Result<RegistryConfig> {
    if !config_file.is_file() {
        return Ok(RegistryConfig::default());
    }
    Ok(Config::load(config_file)?.registry)
}
