//! The settings that name folders, checked and worded alike: a granted folder's guest path,
//! and a list that names no folder twice.

use std::fmt::Display;

use workspace_path::GuestPathError;

/// The one spelling of `dir`, a granted folder's guest path: absolute, without `..`, not
/// `/`. The error says how to name such a folder, `example` being one, and what to name
/// rather than the whole sandbox (`instead_of_root`, such as "name the granted folder itself").
pub fn granted_folder(dir: &str, example: &str, instead_of_root: &str) -> Result<String, String> {
    workspace_path::normalize_guest(dir).map_err(|error| match error {
        GuestPathError::Relative(dir) => format!(
            "`{dir}` is not an absolute path; name the folder as the plugin's [plugin.grants.dirs] maps \
             it, such as \"{example}\""
        ),
        GuestPathError::ParentDir(dir) => format!("`{dir}` contains `..`; name the granted folder itself"),
        GuestPathError::Nul(dir) => format!("`{}` holds a NUL character", dir.escape_debug()),
        GuestPathError::Root => format!("`/` is the whole sandbox; {instead_of_root}"),
    })
}

/// That the setting `field` lists each of its folders (already spelt once) only once; the
/// error names both places a folder is listed.
pub fn no_repeats(field: &str, dirs: &[impl PartialEq + Display]) -> Result<(), String> {
    for (index, dir) in dirs.iter().enumerate() {
        if let Some(first) = dirs[..index].iter().position(|earlier| earlier == dir) {
            return Err(format!("`{field}[{index}]`: `{dir}` is already `{field}[{first}]`"));
        }
    }
    Ok(())
}
