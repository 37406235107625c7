//! `agent-host plugin build | publish | add | update | list | verify`: plugins to and from an
//! OCI registry. What each does lives beside it (`plugin_artifact.rs`, `plugin_add.rs`,
//! `plugin_update.rs`, `plugin_list.rs`, `plugin_verify.rs`); this file is the command line
//! and the dispatch.

use std::path::{Path, PathBuf};

use super::Status;
use super::plugin_add::add;
use super::plugin_artifact::{build, publish};
use super::plugin_list::list;
use super::plugin_update::update;
use super::plugin_verify::verify;

/// What `agent-host plugin` does with registries.
#[derive(Debug, clap::Subcommand)]
pub enum RegistryAction {
    /// Build a plugin folder (or take a .wasm) and print what its artifact will carry: the
    /// component's digest, the contract version, its exports and the grants it declares.
    Build {
        /// A plugin folder (Rust, Python, TypeScript) or a .wasm component.
        path: PathBuf,
        /// Also copy the component here.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Build, then push to REGISTRY/REPOSITORY:TAG in the Wasm OCI layout, annotated with
    /// what `build` prints; prints the manifest's digest.
    Publish {
        /// A plugin folder or a .wasm component.
        path: PathBuf,
        /// Where to push: REGISTRY/REPOSITORY:TAG.
        reference: String,
        /// Also push a cosign-format signature made with this private key (PEM).
        #[arg(long, value_name = "KEY")]
        sign: Option<PathBuf>,
    },
    /// Pin REGISTRY/REPOSITORY:TAG in plugins.lock and add its `[[plugin]]` entry, with the
    /// grants it declares, once accepted; then fetch, verify and cache its component.
    Add {
        /// REGISTRY/REPOSITORY:TAG.
        reference: String,
        /// Accept what it asks for without a question (required when not at a terminal).
        #[arg(long)]
        accept: bool,
    },
    /// Move `oci` plugins (all, or the one NAME picks: its reference or repository name) to
    /// the digest their tag points at now, printing the digest, contract and signer that
    /// changed and every grant added or widened. One that asks for more than its entry grants
    /// is not moved unless accepted (a key at a terminal, or --accept), which widens the
    /// entry's grants in the config too.
    Update {
        name: Option<String>,
        /// Accept what the new versions ask for without a question.
        #[arg(long)]
        accept: bool,
    },
    /// Each plugin of the deployment: where it comes from, its digest, signer, contract
    /// version and grants.
    List,
    /// Check every `oci` plugin against the lock's digest and the trust policy (fetching a
    /// component not cached); exit 1 naming each failure.
    Verify,
}

/// Runs `action` on the deployment whose config is `config_file` (`--config`).
pub async fn run(action: RegistryAction, config_file: &Path) -> Status {
    let result = match action {
        RegistryAction::Build { path, out } => build(&path, out.as_deref()).await,
        RegistryAction::Publish { path, reference, sign } => {
            publish(&path, &reference, sign.as_deref(), config_file).await
        }
        RegistryAction::Add { reference, accept } => add(&reference, accept, config_file).await,
        RegistryAction::Update { name, accept } => update(name.as_deref(), accept, config_file).await,
        RegistryAction::List => list(config_file).await,
        RegistryAction::Verify => verify(config_file).await,
    };
    match result {
        Ok(status) => status,
        Err(error) => {
            eprintln!("error: {}", agent_host::sanitize::multi_line(&format!("{error:#}")));
            Status::BadInput
        }
    }
}
