//! Plugins from a registry under a key policy (`[plugins] trust = { keys = [...] }`): a
//! component signed by a trusted key (cosign's format, keys made with the `openssl` CLI) is
//! added and loaded, with its registry gone too; one unsigned, or signed by another key, is
//! refused naming the reference and the digest.

use std::path::Path;
use std::process::{Command, Output};

use agent_host::config::RegistryConfig;
use agent_host::oci::{DeclaredGrants, Lockfile, PluginAnnotations, publish, sign};

use crate::support::registry::Registry;
use crate::support::{plugin_wasm, repo_root};

/// A P-256 key pair at `DIR/NAME.pem` and `DIR/NAME.pub`, made by openssl.
fn key_pair(dir: &Path, name: &str) {
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub"));
    let made = Command::new("openssl")
        .args(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out"])
        .arg(&private)
        .status()
        .expect("openssl runs");
    assert!(made.success());
    let made = Command::new("openssl")
        .args(["pkey", "-in"])
        .arg(&private)
        .arg("-pubout")
        .arg("-out")
        .arg(&public)
        .status()
        .expect("openssl runs");
    assert!(made.success());
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the binary runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// A deployment trusting `trust` (a `[plugins] trust` value) beside the `todo` plugin.
fn deployment(trust: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a folder");
    let config = format!(
        "[model]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n\n[plugins]\ntrust = {trust}\n\n\
         [[plugin]]\npath = \"{}\"\n",
        plugin_wasm("todo").display()
    );
    std::fs::write(dir.path().join("config.toml"), config).expect("write the config");
    dir
}

/// triage-modes' build pushed to `reference` through the library, signed with `key` if any.
async fn push(reference: &str, key: Option<&Path>) -> String {
    let annotations = PluginAnnotations {
        contract: "0.2.7".into(),
        exports: vec!["provide".into()],
        grants: toml::from_str::<DeclaredGrants>("read_state = [\"todo\"]").expect("grants"),
    };
    let bytes = std::fs::read(plugin_wasm("triage-modes")).expect("the component");
    let registries = RegistryConfig::default();
    let digest =
        publish(reference, bytes, &annotations, &registries).await.expect("the push").manifest_digest;
    if let Some(key) = key {
        sign(reference, &digest, key, &registries).await.expect("the signature");
    }
    digest
}

#[tokio::test]
async fn only_a_component_signed_by_a_trusted_key_is_added_and_loaded() {
    let mut registry = Registry::start();
    let keys = tempfile::tempdir().unwrap();
    key_pair(keys.path(), "team");
    key_pair(keys.path(), "stranger");
    let dir = deployment("{ keys = [\"team.pub\"] }");
    std::fs::copy(keys.path().join("team.pub"), dir.path().join("team.pub")).unwrap();

    // Signed by the team's key, through `plugin publish --sign`.
    let signed = format!("{}/plugins/triage-modes:signed", registry.address);
    let folder = repo_root().join("plugins/triage-modes");
    let key = keys.path().join("team.pem");
    let published = run(
        dir.path(),
        &["plugin", "publish", folder.to_str().unwrap(), &signed, "--sign", key.to_str().unwrap()],
    );
    assert!(published.status.success(), "{}", text(&published));
    let added = run(dir.path(), &["plugin", "add", &signed, "--accept"]);
    assert!(added.status.success(), "{}", text(&added));
    let lock = Lockfile::read(&dir.path().join("plugins.lock")).unwrap();
    assert!(lock.get(&signed).unwrap().signer.starts_with("sha256:"), "{lock:?}");
    std::fs::remove_dir_all(dir.path().join(".agent-host/cache")).ok();
    let checked = run(dir.path(), &["check", "--offline"]);
    assert!(checked.status.success(), "{}", text(&checked));

    // Unsigned, and signed by a key the deployment does not trust: refused at add.
    for (tag, key) in [("unsigned", None), ("stranger", Some(keys.path().join("stranger.pem")))] {
        let reference = format!("{}/plugins/triage-modes:{tag}", registry.address);
        let digest = push(&reference, key.as_deref()).await;
        let refused = run(dir.path(), &["plugin", "add", &reference, "--accept"]);
        let shown = text(&refused);
        assert_eq!(refused.status.code(), Some(2), "{shown}");
        assert!(
            shown.contains(&reference) && shown.contains(&digest) && shown.contains("signature"),
            "{shown}"
        );
        assert!(Lockfile::read(&dir.path().join("plugins.lock")).unwrap().get(&reference).is_none());
    }

    // With the registry gone, the signatures kept beside the component still prove it.
    registry.stop();
    let offline = run(dir.path(), &["check", "--offline"]);
    assert!(offline.status.success(), "{}", text(&offline));
}

#[tokio::test]
async fn a_pinned_unsigned_component_is_refused_once_the_policy_asks_for_keys() {
    let registry = Registry::start();
    let keys = tempfile::tempdir().unwrap();
    key_pair(keys.path(), "team");
    let dir = deployment("\"digest\"");
    let reference = format!("{}/plugins/triage-modes:plain", registry.address);
    let digest = push(&reference, None).await;
    let added = run(dir.path(), &["plugin", "add", &reference, "--accept"]);
    assert!(added.status.success(), "{}", text(&added));

    std::fs::copy(keys.path().join("team.pub"), dir.path().join("team.pub")).unwrap();
    let config = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        config.replace("trust = \"digest\"", "trust = { keys = [\"team.pub\"] }"),
    )
    .unwrap();
    let refused = run(dir.path(), &["check", "--offline"]);
    let shown = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{shown}");
    assert!(shown.contains(&reference) && shown.contains(&digest), "{shown}");
}
