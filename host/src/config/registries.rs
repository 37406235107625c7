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
