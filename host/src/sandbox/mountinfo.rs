//! The host's mount points below a folder, so a read-only bind can make each of them
//! read-only too (a recursive bind keeps its submounts' own flags, and a writable
//! `/etc/hosts` mounted by a container runtime would stay writable).

use std::path::{Path, PathBuf};

/// The host's mount points, outermost first, as `/proc/self/mountinfo` lists them.
pub(super) fn mount_points() -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else { return Vec::new() };
    parse(&text)
}

/// The points of `points` strictly below `dir`.
pub(super) fn below<'a>(points: &'a [PathBuf], dir: &'a Path) -> impl Iterator<Item = &'a PathBuf> {
    points.iter().filter(move |point| point.as_path() != dir && point.starts_with(dir))
}

fn parse(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape(field)))
        .collect()
}

/// mountinfo writes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let octal = bytes.get(index + 1..index + 4).filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[index], octal) {
            (b'\\', Some(digits)) => {
                out.push(digits.iter().fold(0u8, |acc, d| acc.wrapping_mul(8).wrapping_add(d - b'0')));
                index += 4;
            }
            (byte, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submounts_are_found_and_unescaped() {
        let text = "22 1 254:0 / / rw - ext4 /dev/vda rw\n\
                    30 22 0:5 /hosts /etc/hosts rw - ext4 /dev/vda rw\n\
                    31 22 0:6 / /etc/my\\040dir rw - tmpfs tmpfs rw\n\
                    32 22 0:7 / /etcetera rw - tmpfs tmpfs rw\n";
        let points = parse(text);
        let found: Vec<&PathBuf> = below(&points, Path::new("/etc")).collect();
        assert_eq!(found, [&PathBuf::from("/etc/hosts"), &PathBuf::from("/etc/my dir")]);
    }
}
