//! Every command a shell line may run, read the way the shell reads it, for deny and ask
//! rules. Nested commands count (`$(…)`, backticks, `<(…)`, subshells, groups, `sh -c '…'`,
//! `eval …`); quotes and escapes are removed (`'r'm`, `\rm`, `$'rm'` are `rm`); assignments,
//! reserved words (`!`, `then`, `do`, …) and wrappers (`env`, `sudo`, `nohup`, `xargs`, …)
//! are skipped; the program is named without its folder (`/bin/rm` is `rm`).
//!
//! It over-approximates on purpose: a deny rule may fire on a command that would not run
//! (one after a comment, a line of a here-document), never miss one that does. What cannot
//! be read before it runs — a program named by a variable, a substitution or a glob — is
//! reported as `dynamic`, and deny and ask rules treat it as a match.

use crate::shell_words::{Word, words};

/// A command the line may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The program (without its folder) and its arguments, unquoted, one space apart.
    pub text: String,
    /// The program's name is only known at run time (`$CMD`, `$(…)`, `r*`).
    pub dynamic: bool,
}

/// Nesting of `sh -c` and `eval` read before giving up (and calling the rest dynamic).
const MAX_DEPTH: usize = 4;

/// Words before the program that the shell (or a wrapper) skips.
const RESERVED: &[&str] = &[
    "!", "{", "}", "(", ")", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
    "case", "esac",
];

/// Programs that run the command given after their options.
const WRAPPERS: &[&str] = &[
    "builtin", "command", "exec", "env", "nohup", "nice", "sudo", "doas", "timeout", "xargs", "stdbuf",
    "setsid", "chrt", "ionice", "taskset", "unbuffer", "watch", "flock", "busybox", "strace", "ltrace",
    "time",
];

/// Programs that run their `-c` argument as a command line.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"];

/// Every command `line` may run, nested ones included.
pub fn commands_run(line: &str) -> Vec<Command> {
    let mut commands = Vec::new();
    collect(line, 0, &mut commands);
    commands
}

fn collect(line: &str, depth: usize, commands: &mut Vec<Command>) {
    for segment in segments(line) {
        resolve(&words(&segment), depth, commands);
    }
}

/// Adds the command `words` runs (and the ones a wrapper, `sh -c` or `eval` in it runs).
fn resolve(words: &[Word], depth: usize, commands: &mut Vec<Command>) {
    let mut start = 0;
    while let Some(word) = words.get(start) {
        if is_assignment(&word.text) || RESERVED.contains(&word.text.as_str()) {
            start += 1;
        } else {
            break;
        }
    }
    let Some(program) = words.get(start) else { return };
    let name = program.text.rsplit('/').next().unwrap_or_default().to_owned();
    let args = &words[start + 1..];
    let text = std::iter::once(name.as_str())
        .chain(args.iter().map(|w| w.text.as_str()))
        .collect::<Vec<_>>()
        .join(" ");
    commands.push(Command { text, dynamic: program.dynamic });
    if depth >= MAX_DEPTH {
        if SHELLS.contains(&name.as_str()) || name == "eval" || WRAPPERS.contains(&name.as_str()) {
            commands.push(Command { text: name, dynamic: true });
        }
        return;
    }
    if WRAPPERS.contains(&name.as_str()) {
        // The wrapped command starts at the first word that is not an option or an
        // assignment, or at the word after it when that word may be an argument: of an
        // option (`sudo -u root rm`) or a number (`timeout 5 rm`, `nice -n 5 rm`).
        if let Some(first) = args.iter().position(|w| !w.text.starts_with('-') && !is_assignment(&w.text)) {
            resolve(&args[first..], depth + 1, commands);
            let maybe_argument = first > 0 || args[first].text.starts_with(|c: char| c.is_ascii_digit());
            if maybe_argument && first + 1 < args.len() {
                resolve(&args[first + 1..], depth + 1, commands);
            }
        }
    }
    if SHELLS.contains(&name.as_str()) {
        let script = args
            .iter()
            .position(|w| w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('c'));
        if let Some(script) = script.and_then(|at| args.get(at + 1)) {
            collect(&script.text, depth + 1, commands);
        }
    }
    if name == "eval" {
        let script = args.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
        collect(&script, depth + 1, commands);
    }
}

/// `NAME=value`, which sets a variable for the command after it.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else { return false };
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One nesting level of the line being read.
struct Frame {
    kind: FrameKind,
    text: String,
    in_double: bool,
    /// Parentheses opened inside a `$(…)`, so its own `)` is found.
    parens: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    Top,
    /// `$(…)`, `<(…)` or `>(…)`.
    Paren,
}

impl Frame {
    fn new(kind: FrameKind) -> Self {
        Self { kind, text: String::new(), in_double: false, parens: 0 }
    }
}

/// The simple commands of `line` as raw text (quotes kept), nested ones as their own
/// segment. A substitution leaves `$_` in the text around it: a word only known at run time.
fn segments(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut done = Vec::new();
    let mut stack = vec![Frame::new(FrameKind::Top)];
    let flush = |frame: &mut Frame, done: &mut Vec<String>| {
        let text = frame.text.trim();
        if !text.is_empty() {
            done.push(text.to_owned());
        }
        frame.text.clear();
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let frame = stack.last_mut().expect("the top frame is never popped");
        if c == '\\' {
            match next {
                Some('\n') => {}
                Some(escaped) => {
                    frame.text.push(c);
                    frame.text.push(escaped);
                }
                None => frame.text.push(c),
            }
            i += 2;
            continue;
        }
        if !frame.in_double {
            if c == '\'' || (c == '$' && next == Some('\'')) {
                // Single quotes hold no substitution; `$'…'` honours backslashes.
                let ansi = c == '$';
                let mut end = i + if ansi { 2 } else { 1 };
                while end < chars.len() && chars[end] != '\'' {
                    end += if ansi && chars[end] == '\\' { 2 } else { 1 };
                }
                let end = end.min(chars.len() - 1);
                frame.text.extend(&chars[i..=end]);
                i = end + 1;
                continue;
            }
            if c == '"' {
                frame.in_double = true;
                frame.text.push(c);
                i += 1;
                continue;
            }
        } else if c == '"' {
            frame.in_double = false;
            frame.text.push(c);
            i += 1;
            continue;
        }
        let opens_paren = next == Some('(') && (c == '$' || (!frame.in_double && (c == '<' || c == '>')));
        if opens_paren {
            frame.text.push_str(" $_ ");
            stack.push(Frame::new(FrameKind::Paren));
            i += 2;
            continue;
        }
        if c == '`' {
            // The shell unescapes `\$`, `\``, `\\` and `\"` in the text between backticks,
            // then reads the result as a command line of its own: so do we.
            let mut inner = String::new();
            let mut end = i + 1;
            while end < chars.len() && chars[end] != '`' {
                match (chars[end], chars.get(end + 1)) {
                    ('\\', Some(&escaped)) => {
                        if !matches!(escaped, '$' | '`' | '\\' | '"') {
                            inner.push('\\');
                        }
                        inner.push(escaped);
                        end += 2;
                    }
                    (other, _) => {
                        inner.push(other);
                        end += 1;
                    }
                }
            }
            frame.text.push_str(" $_ ");
            done.extend(segments(&inner));
            i = end + 1;
            continue;
        }
        if frame.in_double {
            frame.text.push(c);
            i += 1;
            continue;
        }
        match c {
            ')' if frame.kind == FrameKind::Paren && frame.parens == 0 => {
                flush(frame, &mut done);
                stack.pop();
            }
            '(' | ')' => {
                if frame.kind == FrameKind::Paren {
                    frame.parens = if c == '(' { frame.parens + 1 } else { frame.parens - 1 };
                }
                flush(frame, &mut done);
            }
            ';' | '\n' | '|' | '&' => flush(frame, &mut done),
            _ => frame.text.push(c),
        }
        i += 1;
    }
    while let Some(mut frame) = stack.pop() {
        flush(&mut frame, &mut done);
    }
    done
}
