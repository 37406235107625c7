//! What a simple command really runs, for deny and ask rules: its words with quotes and
//! escapes removed, the program's path cut to its name, and wrappers that run another command
//! (`sudo`, `env`, `command`, `nice`, `xargs`, ...) and variable assignments peeled off. So a
//! rule for `rm *` also sees `'rm' -rf x`, `\rm`, `/bin/rm`, `sudo -u root rm` and
//! `FOO=1 env rm`. A script handed to a shell (`sh -c '...'`, `bash -lc`, `eval`) comes back
//! as a script, for the caller to split and check again.
//!
//! Best effort by design: it widens what deny rules see and never what allow rules vouch for
//! (those match the command as written, and refuse anything opaque).

/// What a simple command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// The program's name and its arguments, unquoted, joined by single spaces.
    Command(String),
    /// A script given to a shell or to `eval`; split it into commands again.
    Script(String),
}

/// Programs that run the command named by their remaining words.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "command", "builtin", "exec", "nice", "ionice", "nohup", "time", "timeout",
    "stdbuf", "setsid", "xargs",
];
/// Wrapper options that take the next word as their value (`sudo -u root`, `nice -n 5`).
const OPTIONS_WITH_VALUE: &[&str] = &["-u", "-g", "-C", "-n", "-c", "-I", "-L", "-P", "-d", "-s", "-E"];
/// Shells whose `-c` option takes a script.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];

/// The words of `part` as the shell passes them on: split on unquoted whitespace, with
/// single quotes, double quotes and backslashes removed.
pub fn words(part: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = part.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            word.extend(chars.next());
                        }
                        _ => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// What `part` runs once quotes, paths, assignments and wrappers are out of the way.
pub fn what_runs(part: &str) -> Runs {
    let words = words(part);
    let mut rest = words.as_slice();
    loop {
        while rest.first().is_some_and(|w| is_assignment(w)) {
            rest = &rest[1..];
        }
        let Some(first) = rest.first() else {
            return Runs::Command(String::new());
        };
        let program = program_name(first);
        if WRAPPERS.contains(&program) {
            rest = skip_options(&rest[1..]);
            if program == "timeout" && !rest.is_empty() {
                // `timeout DURATION COMMAND`
                rest = &rest[1..];
            }
            continue;
        }
        let args = &rest[1..];
        if program == "eval" {
            return Runs::Script(args.join(" "));
        }
        if SHELLS.contains(&program)
            && let Some(at) = args.iter().position(|w| is_script_option(w))
            && let Some(script) = args.get(at + 1)
        {
            return Runs::Script(script.clone());
        }
        let mut line = program.to_owned();
        for arg in args {
            line.push(' ');
            line.push_str(arg);
        }
        return Runs::Command(line);
    }
}

/// `/usr/bin/rm` runs `rm`.
fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `NAME=value`, as in `FOO=1 rm x` or `env FOO=1 rm x`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A wrapper's options (and the values some of them take) and assignments, skipped.
fn skip_options(mut rest: &[String]) -> &[String] {
    while let Some(word) = rest.first() {
        if word == "--" {
            return &rest[1..];
        }
        if is_assignment(word) {
            rest = &rest[1..];
        } else if word.starts_with('-') && word.len() > 1 {
            let takes_value = OPTIONS_WITH_VALUE.contains(&word.as_str());
            rest = &rest[if takes_value { 2.min(rest.len()) } else { 1 }..];
        } else {
            break;
        }
    }
    rest
}

/// `-c`, or short options bundled with it (`-lc`, `-ec`).
fn is_script_option(word: &str) -> bool {
    word.strip_prefix('-').is_some_and(|flags| !flags.starts_with('-') && flags.contains('c'))
}
