//! The stock plugins this binary carries (`builtin = "NAME"`): components built from
//! `plugins/` by the build script (`host/build_script/`, the list in `plugins/stock.toml`), so a
//! deployment needs no toolchain and no checkout. A builtin never changes while the binary
//! runs, so nothing watches it; a new binary brings new bytes under a new file name.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// The names of the stock plugins this binary carries, in `plugins/stock.toml`'s order.
pub fn names() -> impl Iterator<Item = &'static str> {
    CARRIED.iter().map(|(name, _)| *name)
}

/// The component of the builtin `name`, if this binary carries one.
pub fn component(name: &str) -> Option<&'static [u8]> {
    CARRIED.iter().find(|(carried, _)| *carried == name).map(|(_, bytes)| *bytes)
}

/// The builtin `name` as a `.wasm` file the loader reads like any other:
/// `<cache_dir>/builtin/<name>-<sha256 prefix>.wasm`, written once (through a rename, so a
/// host starting beside this one never reads half of it) and reused while the bytes are the
/// same. `Err` names the builtins this binary carries when `name` is none of them.
pub fn materialise(name: &str, cache_dir: &Path) -> Result<PathBuf, String> {
    let bytes = component(name).ok_or_else(|| {
        format!(
            "builtin \"{name}\": this binary carries no plugin of that name; it carries {}",
            names().map(|name| format!("\"{name}\"")).collect::<Vec<_>>().join(", ")
        )
    })?;
    let digest = hex::encode(&Sha256::digest(bytes)[..8]);
    let folder = cache_dir.join("builtin");
    let file = folder.join(format!("{name}-{digest}.wasm"));
    if std::fs::metadata(&file).is_ok_and(|found| found.len() == bytes.len() as u64) {
        return Ok(file);
    }
    let fail =
        |error: std::io::Error| format!("builtin \"{name}\": cannot write {}: {error}", file.display());
    std::fs::create_dir_all(&folder).map_err(fail)?;
    let staging = tempfile::NamedTempFile::new_in(&folder).map_err(fail)?;
    std::fs::write(staging.path(), bytes).map_err(fail)?;
    staging.persist(&file).map_err(|error| fail(error.error))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_carried_plugin_is_a_component_and_named_once() {
        let names: Vec<&str> = names().collect();
        assert!(!names.is_empty(), "the build script embedded the stock plugins");
        for name in &names {
            assert_eq!(names.iter().filter(|other| *other == name).count(), 1, "{name} is carried once");
            // A component's preamble: `\0asm`, then a version whose layer field says component.
            let bytes = component(name).unwrap();
            assert_eq!(&bytes[..4], b"\0asm", "{name}");
            assert_eq!(&bytes[6..8], &[1, 0], "{name} is a component, not a core module");
        }
    }

    #[test]
    fn a_builtin_is_written_once_and_reused() {
        let cache = tempfile::tempdir().unwrap();
        let name = names().next().unwrap();
        let file = materialise(name, cache.path()).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), component(name).unwrap());
        let written = std::fs::metadata(&file).unwrap().modified().unwrap();
        assert_eq!(materialise(name, cache.path()).unwrap(), file);
        assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), written, "not written again");
    }

    #[test]
    fn an_unknown_name_lists_the_ones_carried() {
        let cache = tempfile::tempdir().unwrap();
        let error = materialise("nope", cache.path()).unwrap_err();
        assert!(error.starts_with("builtin \"nope\": this binary carries no plugin of that name"), "{error}");
        for name in names() {
            assert!(error.contains(&format!("\"{name}\"")), "{error}");
        }
        assert!(!cache.path().join("builtin").exists(), "nothing written for it");
    }
}
