//! A pseudo-terminal for the binary's stdin (and output): the host then sees a person at a
//! terminal.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::OpenOptionsExt as _;

/// A new pseudo-terminal of `rows` x `columns`: (the controlling side, the terminal's side).
#[allow(unsafe_code)]
pub fn pseudo_terminal(rows: u16, columns: u16) -> (File, File) {
    // SAFETY: plain libc calls on descriptors this function owns from their creation; the
    // name buffer and the window size outlive the calls that use them.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let controller = File::from_raw_fd(fd);
        assert_eq!(libc::grantpt(fd), 0, "grantpt: {}", std::io::Error::last_os_error());
        assert_eq!(libc::unlockpt(fd), 0, "unlockpt: {}", std::io::Error::last_os_error());
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0, "ptsname_r");
        let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap().to_owned();
        let terminal = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(name)
            .unwrap();
        let size = libc::winsize { ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0 };
        assert_eq!(libc::ioctl(terminal.as_raw_fd(), libc::TIOCSWINSZ, &size), 0, "TIOCSWINSZ");
        (controller, terminal)
    }
}

/// Tells the terminal behind `controller` it is now `rows` x `columns`, as a window resized.
#[allow(unsafe_code)]
pub fn resize(controller: &File, rows: u16, columns: u16) {
    let size = libc::winsize { ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: an ioctl on a descriptor `controller` owns, with a window size that outlives it.
    let done = unsafe { libc::ioctl(controller.as_raw_fd(), libc::TIOCSWINSZ, &size) };
    assert_eq!(done, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
}
