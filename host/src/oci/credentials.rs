//! Who the host is to a registry: the variables `[plugins.registries."HOST"]` names, else the
//! credential files docker and podman write (`auths`, base64 `user:password`), else nobody.
//! Never the config file itself.

use std::path::PathBuf;

use base64::Engine as _;
use oci_client::secrets::RegistryAuth;

use crate::config::RegistrySettings;

/// The login for `registry` (`HOST:PORT`); `Err` names a variable the config names but the
/// environment lacks.
pub fn auth_for(registry: &str, settings: &RegistrySettings) -> Result<RegistryAuth, String> {
    if let (Some(user_env), Some(password_env)) = (&settings.username_env, &settings.password_env) {
        let read = |name: &str| {
            std::env::var(name).map_err(|_| {
                format!("[plugins.registries.\"{registry}\"] names the variable {name}, which is not set")
            })
        };
        return Ok(RegistryAuth::Basic(read(user_env)?, read(password_env)?));
    }
    Ok(credential_files()
        .into_iter()
        .find_map(|file| from_file(&file, registry))
        .map_or(RegistryAuth::Anonymous, |(user, password)| RegistryAuth::Basic(user, password)))
}

/// The credential files, in the order they are asked: podman's, then docker's.
fn credential_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(file) = std::env::var_os("REGISTRY_AUTH_FILE") {
        files.push(PathBuf::from(file));
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR") {
        files.push(PathBuf::from(dir).join("containers/auth.json"));
    }
    match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => files.push(PathBuf::from(dir).join("config.json")),
        None => {
            if let Some(home) = std::env::var_os("HOME") {
                files.push(PathBuf::from(home).join(".docker/config.json"));
            }
        }
    }
    files
}

/// `registry`'s user and password in the credential file `path`, if it holds them.
fn from_file(path: &std::path::Path, registry: &str) -> Option<(String, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    from_json(&text, registry)
}

fn from_json(text: &str, registry: &str) -> Option<(String, String)> {
    let document: serde_json::Value = serde_json::from_str(text).ok()?;
    let auths = document.get("auths")?.as_object()?;
    let entry = auths.iter().find_map(|(key, entry)| (server_of(key) == registry).then_some(entry))?;
    let encoded = entry.get("auth")?.as_str()?;
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let (user, password) =
        String::from_utf8(decoded).ok()?.split_once(':').map(|(u, p)| (u.to_owned(), p.to_owned()))?;
    Some((user, password))
}

/// A credential file's key as a registry: `https://HOST/v1/` is `HOST`.
fn server_of(key: &str) -> &str {
    let key = key.strip_prefix("https://").or_else(|| key.strip_prefix("http://")).unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_file_entry_is_found_by_its_registry() {
        let auth = base64::engine::general_purpose::STANDARD.encode("me:secret");
        let text = format!(r#"{{"auths": {{"https://reg.example:5000/v1/": {{"auth": "{auth}"}}}}}}"#);
        assert_eq!(from_json(&text, "reg.example:5000"), Some(("me".into(), "secret".into())));
        assert_eq!(from_json(&text, "other:5000"), None);
    }
}
