//! How permission rules read a shell command line, built on a real shell grammar
//! (`brush-parser`, a bash parser in pure Rust).
//!
//! The line is read twice: as bash reads it, and as dash — what `/bin/sh` is on Debian,
//! and what runs the shell tool's lines — reads it (`$'…'` and `$"…"` are not quotes there,
//! and `&>` is two operators). Each reading serves both kinds of rule:
//!
//! - [`Reading::allowable`]: the simple commands of a line made wholly of literal words, or
//!   `None` when either reading finds anything it cannot read to the end. Allow rules vouch
//!   only for such lines, and only when every command, and every one of `runs`, is matched.
//! - [`Reading::runs`]: every command the line may run, looking through wrappers, nested
//!   shells, `eval`, `trap`, `find -exec`, substitutions and compound commands, and the
//!   exec and write options of `sed`, `tar`, `git` and `find` (`gadgets`; a write is
//!   `tee FILE`); programs known only at run time (interpreters, `xargs -I`) are `dynamic`. Deny and ask rules look at these, so
//!   they over-approximate: best effort, never the security boundary.

mod gadgets;
mod literal;
mod options;
mod parse;
mod runs;
mod word;
mod wrappers;

#[cfg(test)]
mod tests;

pub use runs::Command;

/// What the permission rules need to know about one command line.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// The line's simple commands (words joined by one space) when both readings are
    /// literal to the end; `None` otherwise.
    pub allowable: Option<Vec<String>>,
    /// Every command the line may run, under either reading.
    pub runs: Vec<Command>,
}

/// Deepest bracket nesting read; past it the grammar's recursion could exhaust the
/// plugin's stack, so such a line counts as unreadable.
const MAX_NESTING: usize = 64;

/// Longest line read (bytes); a longer one counts as unreadable.
const MAX_LINE_BYTES: usize = 256 * 1024;

/// Reads `line` for the permission rules.
pub fn read(line: &str) -> Reading {
    if line.len() > MAX_LINE_BYTES || nesting(line) > MAX_NESTING {
        let why = format!("longer than {MAX_LINE_BYTES} bytes or nested deeper than {MAX_NESTING} brackets");
        let head: String = line.chars().take(80).collect();
        return Reading { allowable: None, runs: vec![Command::unreadable(&head, &why)] };
    }
    let readings = parse::readings(line);
    let mut allowable = Some(Vec::new());
    let mut runs = Vec::new();
    for reading in &readings {
        match reading {
            Ok(program) => {
                match (allowable.as_mut(), literal::simple_commands(program)) {
                    (Some(all), Some(parts)) => {
                        for part in parts {
                            if !all.contains(&part) {
                                all.push(part);
                            }
                        }
                    }
                    _ => allowable = None,
                }
                runs::collect(program, 0, &mut runs);
            }
            Err(error) => {
                allowable = None;
                runs.push(Command::unreadable(line, error));
            }
        }
    }
    // A program known only at run time (`… | sh`, `python -c`) is never vouched for.
    if allowable.as_ref().is_some_and(Vec::is_empty) || runs.iter().any(|c| c.dynamic) {
        allowable = None;
    }
    runs.dedup();
    Reading { allowable, runs }
}

/// The deepest nesting of `(`, `{` and backquotes in `line`, quotes ignored (so it may
/// over-count, never under-count, what the grammar will recurse into).
fn nesting(line: &str) -> usize {
    let (mut depth, mut deepest, mut backquoted) = (0usize, 0usize, false);
    for c in line.chars() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth = depth.saturating_sub(1),
            '`' => {
                backquoted = !backquoted;
                if backquoted {
                    depth += 1;
                } else {
                    depth = depth.saturating_sub(1);
                }
            }
            _ => {}
        }
        deepest = deepest.max(depth);
    }
    deepest
}
