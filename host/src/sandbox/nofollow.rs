//! Opening a granted folder by its canonical path without following a symbolic link on the
//! way. A grant's path is resolved once, when the config is loaded; what a plugin may write
//! (its own workspace, another plugin's) may hold a folder of that path, and replacing one
//! of them with a link must not carry the next run, or the next call, somewhere else.
//!
//! The sandbox's child walks the same components itself (`child.rs`), since a bind must
//! start in its own mount namespace; this walk gives the host the clear error first.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Why a granted folder could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error(
        "{link} is a symbolic link now (it was not when the config was loaded); a granted \
         folder is opened without following links, so {folder} is not shown"
    )]
    Link { folder: PathBuf, link: PathBuf },
    #[error("{folder} is not an absolute path without `.` or `..`")]
    NotCanonical { folder: PathBuf },
    #[error("{folder}: {source}")]
    Io { folder: PathBuf, source: std::io::Error },
}

/// The flags of every step of the walk: a handle that only names the folder, never a link.
pub(super) const WALK_FLAGS: libc::c_int =
    libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;

/// The components of `folder`, each as a C string, checked to be plain names.
pub(super) fn components(folder: &Path) -> Result<Vec<CString>, FolderError> {
    let not_canonical = || FolderError::NotCanonical { folder: folder.to_path_buf() };
    let mut parts = folder.components();
    if parts.next() != Some(Component::RootDir) {
        return Err(not_canonical());
    }
    parts
        .map(|part| match part {
            Component::Normal(name) => CString::new(name.as_bytes()).map_err(|_| not_canonical()),
            _ => Err(not_canonical()),
        })
        .collect()
}

/// Opens `folder` (absolute, canonical) as an `O_PATH` handle, one component at a time,
/// refusing a symbolic link anywhere on the way and naming it.
pub fn open_folder(folder: &Path) -> Result<OwnedFd, FolderError> {
    let io = |source| FolderError::Io { folder: folder.to_path_buf(), source };
    let names = components(folder)?;
    // SAFETY: open on a static C string; the result is checked and owned at once.
    let mut current = unsafe { owned(libc::open(c"/".as_ptr(), WALK_FLAGS)) }.map_err(io)?;
    let mut walked = PathBuf::from("/");
    for name in &names {
        walked.push(std::ffi::OsStr::from_bytes(name.as_bytes()));
        // SAFETY: openat on a descriptor we own and a C string; the result is owned at once.
        let next = unsafe { owned(libc::openat(raw(&current), name.as_ptr(), WALK_FLAGS)) };
        current = match next {
            Ok(next) => next,
            Err(error) => {
                let is_link =
                    std::fs::symlink_metadata(&walked).is_ok_and(|meta| meta.file_type().is_symlink());
                return Err(if is_link {
                    FolderError::Link { folder: folder.to_path_buf(), link: walked }
                } else {
                    io(error)
                });
            }
        };
    }
    Ok(current)
}

/// The path under which the process reopens `fd` (what it names, not a path looked up again).
pub fn fd_path(fd: &OwnedFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", raw(fd)))
}

fn raw(fd: &OwnedFd) -> RawFd {
    use std::os::fd::AsRawFd;
    fd.as_raw_fd()
}

/// # Safety
/// `fd` must be a fresh descriptor nothing else owns, or -1.
unsafe fn owned(fd: RawFd) -> std::io::Result<OwnedFd> {
    if fd < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        // SAFETY: the caller hands over a descriptor nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}
