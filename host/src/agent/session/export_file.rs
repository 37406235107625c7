//! Writing an export to the operator's file: never through a final symbolic link, never
//! over a file that exists unless forced, and then by renaming a new file over the name, so
//! that what the name held (and any other name of it, a hard link) is left as it was.

use std::io::{ErrorKind, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// Why an export was not written.
pub enum Refusal {
    Link,
    Exists,
    Io(std::io::Error),
}

impl From<std::io::Error> for Refusal {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error)
    }
}

/// Writes `bytes` to `path`: a new file (owner-only: a session's history is private), or,
/// with `force`, a file replacing the one there.
pub fn write(path: &Path, bytes: &[u8], force: bool) -> Result<(), Refusal> {
    match std::fs::symlink_metadata(path) {
        Ok(found) if found.file_type().is_symlink() => return Err(Refusal::Link),
        Ok(_) if !force => return Err(Refusal::Exists),
        Ok(_) => return replace(path, bytes),
        Err(error) if error.kind() == ErrorKind::NotFound => {}
        Err(error) => return Err(error.into()),
    }
    // Created here or refused: a name planted since the look above (a link included, which
    // O_EXCL and O_NOFOLLOW both refuse to follow) is not written through.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(
            |error| if error.kind() == ErrorKind::AlreadyExists { Refusal::Exists } else { error.into() },
        )?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(())
}

/// A new file beside `path`, renamed over it: rename(2) replaces the name, never what a
/// link there points at.
fn replace(path: &Path, bytes: &[u8]) -> Result<(), Refusal> {
    let folder = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut file = tempfile::Builder::new().prefix(".export-").tempfile_in(folder)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| Refusal::Io(error.error))?;
    Ok(())
}
