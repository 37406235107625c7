//! `[plugins]`: how plugins from an OCI registry (`[[plugin]] oci = "REF"`) are trusted and
//! reached — the trust policy, and per-registry transport and credential settings. The
//! credentials themselves never live here: only the names of the variables that hold them.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use super::{Config, ConfigError, is_variable_name};

/// The file, beside the config, that pins every `oci` plugin to a digest.
pub const LOCK_FILE: &str = "plugins.lock";

/// `[plugins]` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RegistryConfig {
    /// What a pulled component must prove before it runs.
    pub trust: TrustPolicy,
    /// Settings per registry, by its host (and port) as references spell it: `"HOST:PORT"`.
    pub registries: BTreeMap<String, RegistrySettings>,
}

/// `[plugins] trust`: `"digest"` (the default) or `{ keys = ["keys/team.pub", ...] }`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TrustPolicy {
    /// The digest pinned in `plugins.lock` is the whole proof: the bytes run are the bytes
    /// that were added.
    #[default]
    Digest,
    /// The digest, and a cosign signature of it by one of these public keys (PEM files,
    /// relative to the config file).
    Keys(Vec<Spanned<PathBuf>>),
}

/// `[plugins.registries."HOST:PORT"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RegistrySettings {
    /// Speak plain HTTP to this registry even though it is not on a loopback address.
    pub insecure: bool,
    /// The variable holding the user name to log in with.
    pub username_env: Option<String>,
    /// The variable holding the password (or token) to log in with.
    pub password_env: Option<String>,
    /// A PEM file of certificate authorities to trust for this registry, beside the system's:
    /// a private registry's own CA. Relative to the config file; absolute once loaded.
    pub ca_file: Option<Spanned<PathBuf>>,
}

impl Config {
    /// Where `plugins.lock` is: beside the config file.
    pub fn lock_path(&self) -> PathBuf {
        self.source.dir.join(LOCK_FILE)
    }

    /// The settings of `registry` (`HOST:PORT`), defaults when the file names none.
    pub fn registry_settings(&self, registry: &str) -> RegistrySettings {
        self.registry.registries.get(registry).cloned().unwrap_or_default()
    }
}

/// The key table of `trust`: only `keys`, so a misspelling is refused by name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeysTable {
    keys: Vec<Spanned<PathBuf>>,
}

impl<'de> Deserialize<'de> for TrustPolicy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TrustVisitor;
        impl<'de> Visitor<'de> for TrustVisitor {
            type Value = TrustPolicy;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"digest\" or a table `{ keys = [\"PUBLIC-KEY.pem\", ...] }`")
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<TrustPolicy, E> {
                match value {
                    "digest" => Ok(TrustPolicy::Digest),
                    other => Err(E::custom(format!(
                        "unknown trust `{other}`: write \"digest\" (the pinned digest is the proof) or \
                         `{{ keys = [\"keys/team.pub\"] }}` (a signature by one of these keys too)"
                    ))),
                }
            }

            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<TrustPolicy, M::Error> {
                let table = KeysTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(TrustPolicy::Keys(table.keys))
            }
        }
        deserializer.deserialize_any(TrustVisitor)
    }
}

/// Every `ca_file` made absolute, so whatever reaches a registry needs no config folder.
pub(super) fn resolve(config: &mut Config) {
    let dir = config.source.dir.clone();
    for settings in config.registry.registries.values_mut() {
        if let Some(file) = &mut settings.ca_file
            && file.get_ref().is_relative()
        {
            *file.get_mut() = dir.join(file.get_ref());
        }
    }
}

/// What serde cannot check of `[plugins]`: keys named exist, credential variables are
/// names, given in pairs.
pub(super) fn check(config: &Config) -> Result<(), ConfigError> {
    if let TrustPolicy::Keys(keys) = &config.registry.trust {
        if keys.is_empty() {
            return Err(config.error(
                "plugins.trust.keys",
                "names no key: list the public keys (PEM) a plugin's signature may be made with, or \
                 write `trust = \"digest\"`",
            ));
        }
        for key in keys {
            let path = config.resolve(key.get_ref());
            if !path.is_file() {
                return Err(config.error_at(
                    key.span(),
                    "plugins.trust.keys",
                    format!("no public key at {}", path.display()),
                ));
            }
        }
    }
    for (registry, settings) in &config.registry.registries {
        let field = |key: &str| format!("plugins.registries.\"{registry}\".{key}");
        for (key, value) in
            [("username_env", &settings.username_env), ("password_env", &settings.password_env)]
        {
            if let Some(name) = value
                && !is_variable_name(name)
            {
                // The value is not repeated: a secret pasted here by mistake must not reach a log.
                return Err(config.error_near(
                    field(key),
                    &format!("plugins.registries.\"{registry}\""),
                    format!("must name the environment variable that holds it (letters, digits and `_`), not the {} itself", key.trim_end_matches("_env")),
                ));
            }
        }
        if let Some(file) = &settings.ca_file {
            let refuse = |message: String| Err(config.error_at(file.span(), field("ca_file"), message));
            match std::fs::read_to_string(file.get_ref()) {
                Err(error) => return refuse(format!("cannot read {}: {error}", file.get_ref().display())),
                Ok(text) if !text.contains("-----BEGIN CERTIFICATE-----") => {
                    return refuse(format!(
                        "{} holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)",
                        file.get_ref().display()
                    ));
                }
                Ok(_) => {}
            }
        }
        if settings.username_env.is_some() != settings.password_env.is_some() {
            let missing = if settings.username_env.is_none() { "username_env" } else { "password_env" };
            return Err(config.error_near(
                field(missing),
                &format!("plugins.registries.\"{registry}\""),
                "a registry login needs both `username_env` and `password_env`",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::load::parse;

    fn config_in(dir: &Path, text: &str) -> Result<super::Config, super::ConfigError> {
        parse(text, &dir.join("config.toml"))
    }

    #[test]
    fn a_ca_file_is_read_beside_the_config_and_refused_by_line_when_missing_or_not_pem() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("ca.pem"),
            "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let config =
            config_in(dir.path(), "[plugins.registries.\"registry.example:5000\"]\nca_file = \"ca.pem\"\n")
                .unwrap();
        let settings = &config.registry.registries["registry.example:5000"];
        assert_eq!(settings.ca_file.as_ref().unwrap().get_ref(), &dir.path().join("ca.pem"));

        let missing = config_in(dir.path(), "[plugins.registries.\"r.example\"]\n\nca_file = \"nope.pem\"\n")
            .unwrap_err();
        assert_eq!(missing.line, Some(3), "{missing}");
        assert_eq!(missing.field.as_deref(), Some("plugins.registries.\"r.example\".ca_file"), "{missing}");
        assert!(missing.message.contains("nope.pem"), "{missing}");

        std::fs::write(dir.path().join("key.pem"), "-----BEGIN PRIVATE KEY-----\n").unwrap();
        let not_a_certificate =
            config_in(dir.path(), "[plugins.registries.\"r.example\"]\nca_file = \"key.pem\"\n").unwrap_err();
        assert!(not_a_certificate.message.contains("no PEM certificate"), "{not_a_certificate}");
    }

    #[test]
    fn a_login_names_variables_in_pairs_and_never_repeats_a_pasted_secret() {
        let dir = tempfile::tempdir().unwrap();
        let pasted = config_in(
            dir.path(),
            "[plugins.registries.\"r.example\"]\nusername_env = \"U\"\npassword_env = \"hunter2!\"\n",
        )
        .unwrap_err();
        assert!(!pasted.to_string().contains("hunter2"), "{pasted}");
        assert!(pasted.message.contains("environment variable"), "{pasted}");
        let half =
            config_in(dir.path(), "[plugins.registries.\"r.example\"]\nusername_env = \"U\"\n").unwrap_err();
        assert!(half.message.contains("both"), "{half}");
        assert_eq!(half.field.as_deref(), Some("plugins.registries.\"r.example\".password_env"), "{half}");
    }
}
