//! Plugins from an OCI registry, through the real binary and a real registry
//! (`support/registry.rs`): published, added (pinned in `plugins.lock`), loaded at the pinned
//! digest whatever the tag says now, refused when their bytes or grants are not what was
//! accepted, and loaded from the cache when the registry is gone.

use std::path::{Path, PathBuf};
use std::process::Output;

use agent_host::config::{RegistryConfig, RegistrySettings};
use agent_host::oci::{DeclaredGrants, Lockfile, PluginAnnotations, publish};

use crate::support::console::{Console, PATIENCE};
use crate::support::registry::{Registry, machine_address};
use crate::support::{plugin_wasm, repo_root};

/// A deployment folder: the `todo` plugin triage-modes gates on, a model never contacted.
struct Deployment {
    dir: tempfile::TempDir,
}

impl Deployment {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("a deployment folder");
        let config = format!(
            "# the operator's own comment\n[model]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n\n\
             [[plugin]]\npath = \"{}\"\n",
            plugin_wasm("todo").display()
        );
        std::fs::write(dir.path().join("config.toml"), config).expect("write the config");
        std::fs::create_dir(dir.path().join("tmp")).expect("a temporary folder");
        Self { dir }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    /// What the commands run here left in their temporary folder (`TMPDIR`).
    fn left_in_tmp(&self) -> Vec<String> {
        let entries = std::fs::read_dir(self.dir.path().join("tmp")).expect("the temporary folder");
        entries.map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned()).collect()
    }

    /// `text` appended to the config.
    fn with(self, text: &str) -> Self {
        let mut config = std::fs::read_to_string(self.config()).expect("the config");
        config.push_str(text);
        std::fs::write(self.config(), config).expect("write the config");
        self
    }

    /// `agent-host --config DIR/config.toml ARGS...`.
    fn run(&self, args: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env("NO_COLOR", "1")
            .env("TMPDIR", self.dir.path().join("tmp"))
            .arg("--config")
            .arg(self.config())
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("the binary runs")
    }

    fn add(&self, reference: &str) {
        let added = self.run(&["plugin", "add", reference, "--accept"]);
        assert!(added.status.success(), "plugin add failed: {}", text(&added));
    }

    /// `plugin update NAME` at a terminal, `key` typed at its question: the screen when it
    /// has exited.
    fn answer_update(&self, name: &str, key: &str) -> String {
        let mut console =
            Console::start(&format!("plugin-update-{key}"), &self.config(), &["plugin", "update", name]);
        console.wait_for("the question", "[y/N]");
        console.keys(&format!("{key}\r"));
        let deadline = std::time::Instant::now() + PATIENCE;
        while console.child.try_wait().expect("the update's status").is_none() {
            assert!(std::time::Instant::now() < deadline, "the update did not end:\n{}", console.contents());
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // The process may end before the terminal's reader has drained what it wrote last.
        console.wait_until("the answer", |screen| {
            // A line after the question's own, which holds the key typed.
            screen
                .split("[y/N]")
                .nth(1)
                .is_some_and(|after| after.lines().skip(1).any(|line| !line.trim().is_empty()))
        })
    }

    fn check(&self) -> Output {
        self.run(&["check", "--offline"])
    }

    /// Empties `[runtime] cache_dir`: the next load pulls.
    fn clear_cache(&self) {
        let _ = std::fs::remove_dir_all(self.dir.path().join(".agent-host/cache"));
    }

    fn lock(&self) -> Lockfile {
        Lockfile::read(&self.dir.path().join("plugins.lock")).expect("plugins.lock reads")
    }
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// `component` pushed to `reference` as a plugin declaring `grants`, through the library.
async fn push(reference: &str, component: &Path, grants: &str) -> String {
    push_to(reference, component, grants, &RegistryConfig::default()).await
}

/// `push`, reaching the registry as `registries` says.
async fn push_to(reference: &str, component: &Path, grants: &str, registries: &RegistryConfig) -> String {
    let annotations = PluginAnnotations {
        contract: "0.2.7".into(),
        exports: vec!["provide".into()],
        grants: toml::from_str::<DeclaredGrants>(grants).expect("declared grants"),
    };
    let bytes = std::fs::read(component).expect("the component");
    publish(reference, bytes, &annotations, registries).await.expect("the push").manifest_digest
}

/// triage-modes (the Rust build), pushed as `agent-host plugin publish` pushes it: from its
/// folder, whose Cargo.toml declares `read_state = ["todo"]`.
fn publish_triage_modes(registry: &Registry, tag: &str) -> String {
    let reference = format!("{}/plugins/triage-modes:{tag}", registry.address);
    let scratch = Deployment::new();
    let folder = repo_root().join("plugins/triage-modes");
    let published = scratch.run(&["plugin", "publish", folder.to_str().expect("UTF-8"), &reference]);
    let shown = text(&published);
    assert!(published.status.success(), "plugin publish failed: {shown}");
    assert_eq!(scratch.left_in_tmp(), Vec::<String>::new(), "publishing leaves nothing behind");
    for line in [
        "contract   0.2.",
        "grants     read_state todo",
        "manifest   sha256:",
        "dev.agent-host.plugin.grants",
    ] {
        assert!(shown.contains(line), "{line} in {shown}");
    }
    reference
}

/// A registry holding triage-modes at `tag`, and a deployment that added it. Keep the
/// registry bound (`_registry` where unused): it stops when dropped.
fn added(tag: &str) -> (Registry, String, Deployment) {
    let registry = Registry::start();
    let reference = publish_triage_modes(&registry, tag);
    let deployment = Deployment::new();
    deployment.add(&reference);
    (registry, reference, deployment)
}

#[tokio::test]
async fn a_published_plugin_added_in_a_fresh_folder_loads_and_keeps_loading_with_the_registry_gone() {
    let mut registry = Registry::start();
    let reference = publish_triage_modes(&registry, "1");
    let deployment = Deployment::new();

    let refused = deployment.run(&["plugin", "add", &reference]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("pass --accept"), "{}", text(&refused));
    assert!(!deployment.dir.path().join("plugins.lock").exists());

    deployment.add(&reference);
    let config = std::fs::read_to_string(deployment.config()).unwrap();
    assert!(config.starts_with("# the operator's own comment\n"), "{config}");
    assert!(
        config.contains(&format!("oci = \"{reference}\"\n[plugin.grants]\nread_state = [\"todo\"]")),
        "{config}"
    );
    let locked = deployment.lock().get(&reference).cloned().expect("the plugin is pinned");
    assert_eq!(locked.grants.read_state, ["todo"]);

    deployment.clear_cache();
    let checked = deployment.check();
    assert!(checked.status.success(), "{}", text(&checked));
    assert!(text(&checked).contains("triage-modes@0.1.0"), "{}", text(&checked));
    assert!(
        text(&checked)
            .contains("triage-modes: Stage (mode): ● triage ○ research ○ review; moved by the model only"),
        "the custom mode plugin's modes: {}",
        text(&checked)
    );
    assert!(
        text(&checked).contains(&locked.layer.replace(':', "-")),
        "loaded from the cache: {}",
        text(&checked)
    );

    registry.stop();
    let offline = deployment.check();
    assert!(offline.status.success(), "the cached plugin loads without its registry: {}", text(&offline));
    assert!(text(&offline).contains("triage-modes@0.1.0"), "{}", text(&offline));

    deployment.clear_cache();
    let gone = deployment.check();
    assert_eq!(gone.status.code(), Some(2), "{}", text(&gone));
    assert!(text(&gone).contains(&reference), "{}", text(&gone));
}

#[tokio::test]
async fn a_moved_tag_still_loads_the_pinned_digest() {
    let (_registry, reference, deployment) = added("moving");
    let pinned = deployment.lock().get(&reference).cloned().expect("pinned");

    let moved = push(&reference, &plugin_wasm("misbehave"), "").await;
    assert_ne!(moved, pinned.manifest, "the tag points elsewhere now");

    deployment.clear_cache();
    let checked = deployment.check();
    assert!(checked.status.success(), "{}", text(&checked));
    assert!(text(&checked).contains("triage-modes@0.1.0"), "{}", text(&checked));
    assert!(!text(&checked).contains("misbehave"), "{}", text(&checked));
}

#[tokio::test]
async fn a_blob_altered_in_the_registry_is_refused_naming_both_digests() {
    let (registry, reference, deployment) = added("altered");
    let pinned = deployment.lock().get(&reference).cloned().expect("pinned");

    let blob = registry.blob_path(&pinned.layer);
    let mut bytes = std::fs::read(&blob).expect("the stored blob");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&blob, &bytes).expect("alter the stored blob");
    let actual = agent_host::oci::sha256_digest(&bytes);

    deployment.clear_cache();
    let refused = deployment.check();
    let shown = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{shown}");
    assert!(shown.contains(&pinned.layer) && shown.contains(&actual), "both digests in: {shown}");
    assert!(
        !deployment
            .dir
            .path()
            .join(".agent-host/cache/oci")
            .join(format!("{}.wasm", pinned.layer.replace(':', "-")))
            .exists()
    );
}

#[tokio::test]
async fn a_declared_grant_the_config_lacks_is_refused_before_any_blob_is_fetched() {
    let (registry, reference, deployment) = added("grants");
    let config = std::fs::read_to_string(deployment.config()).unwrap();
    std::fs::write(deployment.config(), config.replace("[plugin.grants]\nread_state = [\"todo\"]\n", ""))
        .unwrap();

    deployment.clear_cache();
    registry.clear_log();
    let refused = deployment.check();
    let shown = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{shown}");
    assert!(shown.contains(&reference) && shown.contains("`read_state = [\"todo\"]`"), "{shown}");
    assert!(registry.blob_requests().is_empty(), "no blob asked for: {}", registry.log());

    let unpinned = format!("{}/plugins/never-added:1", registry.address);
    std::fs::write(deployment.config(), format!("{config}\n[[plugin]]\noci = \"{unpinned}\"\n")).unwrap();
    let refused = deployment.check();
    assert!(text(&refused).contains(&format!("agent-host plugin add {unpinned}")), "{}", text(&refused));
}

#[tokio::test]
async fn a_hot_reload_to_a_digest_declaring_more_grants_keeps_the_old_version_serving() {
    let (_registry, reference, deployment) = added("reload");
    let pinned = deployment.lock().get(&reference).cloned().expect("pinned");

    let config = agent_host::Config::load(&deployment.config()).expect("the config loads");
    let model = agent_host::model::ModelClient::from_config(&config).unwrap().expect("a model");
    let host = agent_host::Host::new(config, model).await.expect("the host starts");
    let serving = host.plugins().by_name("triage-modes").expect("serving").identity().hash.clone();
    assert_eq!(format!("sha256:{serving}"), pinned.layer);

    // The tag moves to a build declaring `process` too, and the lock follows it.
    let wider =
        push(&reference, &plugin_wasm("triage-modes"), "read_state = [\"todo\"]\nprocess = true\n").await;
    let mut lock = deployment.lock();
    let mut moved = pinned.clone();
    moved.manifest = wider;
    moved.grants.process = true;
    lock.pin(moved);
    lock.write(&deployment.dir.path().join("plugins.lock")).unwrap();

    let error = host.reload(&agent_host::events::NoEvents).await.expect_err("the reload is refused");
    assert!(format!("{error:#}").contains("`process = true`"), "{error:#}");
    let still = host.plugins().by_name("triage-modes").expect("still serving").identity().hash.clone();
    assert_eq!(still, serving);
}

#[tokio::test]
async fn an_update_asking_for_a_new_grant_waits_for_accept_and_list_and_verify_show_the_result() {
    let (registry, reference, deployment) = added("update");
    let pinned = deployment.lock().get(&reference).cloned().expect("pinned");

    let current = deployment.run(&["plugin", "update"]);
    assert!(current.status.success(), "{}", text(&current));
    assert!(text(&current).contains("up to date"), "{}", text(&current));

    // The tag moves to a build that also runs processes.
    let wider =
        push(&reference, &plugin_wasm("triage-modes"), "read_state = [\"todo\"]\nprocess = true\n").await;
    let held = deployment.run(&["plugin", "update", "triage-modes"]);
    let shown = text(&held);
    assert_eq!(held.status.code(), Some(2), "{shown}");
    assert!(shown.contains(&format!("{} -> {wider}", pinned.manifest)), "{shown}");
    assert!(shown.contains("grant +   process = true"), "{shown}");
    assert!(shown.contains("pass --accept"), "{shown}");
    assert_eq!(deployment.lock().get(&reference).expect("pinned").manifest, pinned.manifest);
    assert!(!std::fs::read_to_string(deployment.config()).unwrap().contains("process"));

    // At a terminal the operator is asked, and a key decides: `n` keeps the pinned version,
    // `y` takes the new one.
    let declined = deployment.answer_update("triage-modes", "n");
    assert!(
        declined.contains(&format!("not updated: {reference} stays at {}", pinned.manifest)),
        "{declined}"
    );
    assert_eq!(deployment.lock().get(&reference).expect("pinned").manifest, pinned.manifest);
    let accepted = deployment.answer_update("triage-modes", "y");
    assert!(accepted.contains(&format!("pinned at {wider}")), "{accepted}");
    assert_eq!(deployment.lock().get(&reference).expect("pinned").manifest, wider);
    let config = std::fs::read_to_string(deployment.config()).unwrap();
    assert!(config.starts_with("# the operator's own comment\n"), "{config}");
    assert!(config.contains("process = true"), "{config}");

    let listed = deployment.run(&["plugin", "list"]);
    let shown = text(&listed);
    assert!(listed.status.success(), "{shown}");
    assert!(shown.contains(&format!("oci \"{reference}\"")) && shown.contains(&wider), "{shown}");
    assert!(shown.contains("process") && shown.contains("read_state todo"), "{shown}");

    let verified = deployment.run(&["plugin", "verify"]);
    assert!(verified.status.success(), "{}", text(&verified));
    assert!(text(&verified).contains(&format!("ok    plugin[1] {reference}")), "{}", text(&verified));

    let layer = deployment.lock().get(&reference).expect("pinned").layer.clone();
    let blob = registry.blob_path(&layer);
    let mut bytes = std::fs::read(&blob).expect("the stored blob");
    bytes[0] ^= 0xff;
    std::fs::write(&blob, &bytes).expect("alter the stored blob");
    deployment.clear_cache();
    let failed = deployment.run(&["plugin", "verify"]);
    let shown = text(&failed);
    assert_eq!(failed.status.code(), Some(1), "{shown}");
    assert!(shown.contains(&format!("FAIL  plugin[1] {reference}")) && shown.contains(&layer), "{shown}");
}

/// A private certificate authority, and a certificate it signed for `ip`: their PEM files in
/// `dir` (`ca.pem`, `registry.pem`, `registry.key`).
fn certificates_for(ip: std::net::IpAddr, dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let mut authority = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    authority.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    authority.distinguished_name.push(DnType::CommonName, "agent-host tests' private CA");
    let authority =
        CertifiedIssuer::self_signed(authority, KeyPair::generate().expect("a CA key")).expect("the CA");
    let key = KeyPair::generate().expect("the registry's key");
    let certificate = CertificateParams::new(vec![ip.to_string()])
        .expect("the registry's parameters")
        .signed_by(&key, &authority)
        .expect("the registry's certificate");
    let paths = (dir.join("ca.pem"), dir.join("registry.pem"), dir.join("registry.key"));
    std::fs::write(&paths.0, authority.pem()).expect("write ca.pem");
    std::fs::write(&paths.1, certificate.pem()).expect("write registry.pem");
    std::fs::write(&paths.2, key.serialize_pem()).expect("write registry.key");
    paths
}

#[tokio::test]
async fn a_registry_off_this_machine_is_spoken_to_over_https_unless_the_config_calls_it_insecure() {
    let ip = machine_address();
    let certificates = tempfile::tempdir().expect("a folder for certificates");
    let (authority, certificate, key) = certificates_for(ip, certificates.path());
    let secure = Registry::start_on(ip, Some((&certificate, &key)));
    let reference = format!("{}/plugins/triage-modes:tls", secure.address);
    let trusting = |deployment: Deployment| {
        deployment.with(&format!(
            "\n[plugins.registries.\"{}\"]\nca_file = \"{}\"\n",
            secure.address,
            authority.display()
        ))
    };

    // Published and added over TLS, the registry's certificate checked against its own CA.
    let publisher = trusting(Deployment::new());
    let folder = repo_root().join("plugins/triage-modes");
    let published = publisher.run(&["plugin", "publish", folder.to_str().expect("UTF-8"), &reference]);
    assert!(published.status.success(), "plugin publish over TLS: {}", text(&published));
    let deployment = trusting(Deployment::new());
    deployment.add(&reference);
    let checked = deployment.check();
    assert!(text(&checked).contains("triage-modes@0.1.0"), "{}", text(&checked));

    // Without the CA the same registry's certificate is refused: it was HTTPS, and checked.
    let stranger = Deployment::new();
    let refused = stranger.run(&["plugin", "add", &reference, "--accept"]);
    let shown = text(&refused);
    assert!(!refused.status.success(), "{shown}");
    assert!(shown.contains(&reference) && shown.to_lowercase().contains("certificate"), "{shown}");

    // A registry there speaking plain HTTP is refused until the config calls it insecure.
    let plain = Registry::start_on(ip, None);
    let reference = format!("{}/plugins/triage-modes:plain", plain.address);
    let mut insecure = RegistryConfig::default();
    insecure
        .registries
        .insert(plain.address.clone(), RegistrySettings { insecure: true, ..RegistrySettings::default() });
    push_to(&reference, &plugin_wasm("triage-modes"), "read_state = [\"todo\"]", &insecure).await;
    let deployment = Deployment::new();
    let refused = deployment.run(&["plugin", "add", &reference, "--accept"]);
    let shown = text(&refused);
    assert!(!refused.status.success(), "plain HTTP without `insecure`: {shown}");
    assert!(shown.contains(&reference) && shown.contains("insecure = true"), "{shown}");
    let deployment =
        deployment.with(&format!("\n[plugins.registries.\"{}\"]\ninsecure = true\n", plain.address));
    deployment.add(&reference);
}
