//! Programs that run commands or write files through their arguments, outside any
//! wrapper's shape: `sed` (`e`, `w`, `s///e`, `-i`), `tar` (`--checkpoint-action=exec=`,
//! `--to-command`, `-I`, `-F`, …), `git` (`-c`, `--output`, `--exec-path`, `rebase -x`, …),
//! awk programs, and interpreters, which run code no rule can see.
//!
//! A write is recorded as the command `tee FILE` (as `find -delete` is recorded as
//! `rm -rf`), so an allow rule vouches for it only if it allows writing that file.

use super::options;
use super::runs::{Command, collect_line};
use super::word::WordInfo;
use super::wrappers::resolve;

/// Records that `file` is written by `written` (the command as the line says it).
pub fn writes(file: &WordInfo, written: &str, out: &mut Vec<Command>) {
    if matches!(file.text.as_str(), "/dev/stdout" | "/dev/stderr" | "/dev/null" | "-") {
        return;
    }
    out.push(Command {
        text: format!("tee {}", file.text),
        written: written.to_owned(),
        dynamic: file.dynamic,
        open_ended: false,
    });
}

fn run_line(line: &str, dynamic: bool, depth: usize, out: &mut Vec<Command>) {
    if dynamic {
        out.push(Command::dynamic(format!("{line} (a command line only known at run time)")));
    }
    collect_line(line, depth, out);
}

/// Programs that run code read from their arguments, a file or stdin (`python3 <<EOF`,
/// `ed f <<EOF` with `!cmd`, `gdb -ex 'shell …'`, `dc -e '!…'`, `sqlite3 db .shell`).
pub fn interpreter(name: &str) -> bool {
    let versioned = |prefix: &str| {
        name.strip_prefix(prefix).is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    ["python", "pypy", "perl", "ruby", "php", "lua", "tclsh", "wish", "guile", "node"]
        .iter()
        .any(|p| versioned(p))
        || matches!(
            name,
            "nodejs"
                | "bun"
                | "deno"
                | "luajit"
                | "irb"
                | "Rscript"
                | "R"
                | "julia"
                | "racket"
                | "sbcl"
                | "clisp"
                | "ghci"
                | "runghc"
                | "expect"
                | "jshell"
                | "pwsh"
                | "gdb"
                | "lldb"
                | "ed"
                | "red"
                | "ex"
                | "vi"
                | "vim"
                | "nvim"
                | "view"
                | "vim.tiny"
                | "vim.basic"
                | "dc"
                | "m4"
                | "sqlite3"
        )
}

/// `python3 --version`: nothing but a version or help request.
pub fn only_asks_for_version(args: &[WordInfo]) -> bool {
    !args.is_empty() && args.iter().all(|a| matches!(a.text.as_str(), "--version" | "-V" | "--help" | "-h"))
}

pub fn is_awk(name: &str) -> bool {
    matches!(name, "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk")
}

/// An awk program that may start commands (`system`, `|`) or write files (`>`), or a
/// program read from a file or a loaded extension.
pub fn awk_runs_or_writes(args: &[WordInfo]) -> bool {
    args.iter().any(|a| {
        let text = a.text.as_str();
        text.contains("system")
            || text.contains(['|', '>'])
            || ["-f", "-E", "-i", "-l"].iter().any(|o| text.starts_with(o))
            || ["--file", "--exec", "--include", "--load", "--source"].iter().any(|o| text.starts_with(o))
    })
}

/// `sed`: the scripts of `-e`, `--expression` or the first operand; `-f` reads a script
/// no rule sees; `-i` rewrites each file operand.
pub fn sed(args: &[WordInfo], depth: usize, out: &mut Vec<Command>) {
    const VALUED: &[&str] = &["-e", "--expression", "-f", "--file", "-l", "--line-length"];
    let written =
        std::iter::once("sed").chain(args.iter().map(|a| a.text.as_str())).collect::<Vec<_>>().join(" ");
    let (mut scripts, mut operands, mut in_place, mut sandboxed) = (Vec::new(), Vec::new(), false, false);
    let mut index = 0;
    while index < args.len() {
        if args[index].text == "--" {
            operands.extend(args[index + 1..].iter().cloned());
            break;
        }
        let Some(found) = options::read(args, &mut index, VALUED) else {
            operands.push(args[index].clone());
            index += 1;
            continue;
        };
        for option in found {
            match option.name.as_str() {
                "-e" | "--expression" => scripts.extend(option.value),
                "-f" | "--file" => {
                    out.push(Command::dynamic(format!("{written} (a sed script from a file)")))
                }
                // `-i` takes the rest of its word as a suffix (`-i.bak`), read here as flags.
                "-i" => in_place = true,
                long if options::long_value(long, "--in-place", 1).is_some() => in_place = true,
                long if options::long_value(long, "--sandbox", 2).is_some() => sandboxed = true,
                _ => {}
            }
        }
    }
    if scripts.is_empty() && !operands.is_empty() {
        scripts.push(operands.remove(0));
    }
    if in_place {
        for file in &operands {
            writes(file, &written, out);
        }
    }
    if sandboxed {
        return;
    }
    for script in scripts {
        if script.dynamic {
            out.push(Command::dynamic(format!("{written} (a sed script only known at run time)")));
            continue;
        }
        sed_script(&script.text, &written, depth, out);
    }
}

/// Reads a sed script command by command for `e` (runs), `w`/`W` (writes) and the `s`
/// flags `e` and `w`; what it cannot read counts as dynamic.
fn sed_script(script: &str, written: &str, depth: usize, out: &mut Vec<Command>) {
    let chars: Vec<char> = script.chars().collect();
    let mut at = 0;
    let rest_of_line = |at: &mut usize| {
        let start = *at;
        while *at < chars.len() && chars[*at] != '\n' {
            *at += 1;
        }
        chars[start..*at].iter().collect::<String>()
    };
    let unreadable =
        |out: &mut Vec<Command>| out.push(Command::dynamic(format!("{written} (a sed script not read)")));
    while at < chars.len() {
        let c = chars[at];
        // Separators, blanks, addresses, `!` and block braces.
        if c.is_whitespace()
            || matches!(c, ';' | '{' | '}' | '!' | ',' | '$' | '~' | '+')
            || c.is_ascii_digit()
        {
            at += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let delimiter = if c == '\\' {
                at += 1;
                match chars.get(at) {
                    Some(d) => *d,
                    None => return unreadable(out),
                }
            } else {
                c
            };
            at += 1;
            if skip_delimited(&chars, &mut at, delimiter).is_none() {
                return unreadable(out);
            }
            // `/re/I`, `/re/M` address flags.
            while at < chars.len() && matches!(chars[at], 'I' | 'M') {
                at += 1;
            }
            continue;
        }
        at += 1;
        match c {
            '#' | ':' | 'a' | 'i' | 'c' | 'r' | 'R' | 'b' | 't' | 'T' | 'v' | 'l' | 'q' | 'Q' | 'L' => {
                // Text, a label, a file read, or a number: to the end of the line (a label
                // or number also ends at `;`, which is harmless to skip further).
                rest_of_line(&mut at);
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            'e' => {
                let command = rest_of_line(&mut at);
                if command.trim().is_empty() {
                    out.push(Command::dynamic(format!("{written} (runs its input as a command)")));
                } else {
                    run_line(command.trim(), false, depth, out);
                }
            }
            'w' | 'W' => {
                let file = rest_of_line(&mut at);
                let file = WordInfo { text: file.trim().to_owned(), literal: true, ..WordInfo::default() };
                writes(&file, written, out);
            }
            's' | 'y' => {
                let Some(&delimiter) = chars.get(at) else { return unreadable(out) };
                at += 1;
                if skip_delimited(&chars, &mut at, delimiter).is_none()
                    || skip_delimited(&chars, &mut at, delimiter).is_none()
                {
                    return unreadable(out);
                }
                if c == 'y' {
                    continue;
                }
                while at < chars.len() && !matches!(chars[at], ';' | '\n' | '}') {
                    match chars[at] {
                        'e' => out.push(Command::dynamic(format!("{written} (runs what `s///e` makes)"))),
                        'w' => {
                            at += 1;
                            let file = rest_of_line(&mut at);
                            let file = WordInfo {
                                text: file.trim().to_owned(),
                                literal: true,
                                ..WordInfo::default()
                            };
                            writes(&file, written, out);
                            break;
                        }
                        _ => {}
                    }
                    at += 1;
                }
            }
            _ => return unreadable(out),
        }
    }
}

/// Moves past text ending in an unescaped `delimiter`; `None` when it never ends.
fn skip_delimited(chars: &[char], at: &mut usize, delimiter: char) -> Option<()> {
    while let Some(&c) = chars.get(*at) {
        *at += 1;
        if c == '\\' {
            *at += 1;
        } else if c == delimiter {
            return Some(());
        }
    }
    None
}

/// `tar`: the options that run a command (`--checkpoint-action=exec=`, `--to-command`,
/// `--use-compress-program`/`-I`, `--info-script`/`-F`, `--rsh-command`, a `HOST:FILE`
/// archive) and those that write a file of their own (`--index-file`, `--volno-file`).
pub fn tar(args: &[WordInfo], depth: usize, out: &mut Vec<Command>) {
    const VALUED: &[&str] = &[
        "-f",
        "-C",
        "-I",
        "-F",
        "-g",
        "-K",
        "-L",
        "-N",
        "-T",
        "-V",
        "-X",
        "-b",
        "-H",
        "--file",
        "--directory",
        "--use-compress-program",
        "--info-script",
        "--new-volume-script",
        "--to-command",
        "--checkpoint-action",
        "--rsh-command",
        "--index-file",
        "--volno-file",
        "--listed-incremental",
    ];
    let written =
        std::iter::once("tar").chain(args.iter().map(|a| a.text.as_str())).collect::<Vec<_>>().join(" ");
    // The old style (`tar tfI a.tar prog`): the first word's letters, values in order after it.
    let mut options = Vec::new();
    let mut index = 0;
    if let Some(first) = args.first()
        && !first.text.starts_with('-')
    {
        index = 1;
        for letter in first.text.chars() {
            let name = format!("-{letter}");
            let value = VALUED.contains(&name.as_str()).then(|| args.get(index).cloned()).flatten();
            if value.is_some() {
                index += 1;
            }
            options.push(options::Opt { name, value });
        }
    }
    while index < args.len() {
        match options::read(args, &mut index, VALUED) {
            Some(found) => options.extend(found),
            None => index += 1,
        }
    }
    let force_local = options.iter().any(|o| o.name == "--force-local");
    for option in options {
        let Some(value) = option.value else { continue };
        match option.name.as_str() {
            "--checkpoint-action" => {
                if let Some(command) = value.text.strip_prefix("exec=") {
                    run_line(command, value.dynamic, depth, out);
                }
            }
            "--to-command"
            | "--use-compress-program"
            | "-I"
            | "--info-script"
            | "--new-volume-script"
            | "-F"
            | "--rsh-command" => run_line(&value.text, value.dynamic, depth, out),
            "--index-file" | "--volno-file" => writes(&value, &written, out),
            "-f" | "--file" if value.text.contains(':') && !force_local => {
                out.push(Command::dynamic(format!("{written} (a HOST:FILE archive runs a remote shell)")))
            }
            _ => {}
        }
    }
}

/// Configuration keys `git -c` may set without making git run or write anything.
const HARMLESS_GIT_KEYS: &[&str] = &[
    "color.",
    "advice.",
    "user.name",
    "user.email",
    "core.quotepath",
    "init.defaultbranch",
    "log.",
    "column.",
];

/// `git`: `-c` settings that may run programs (`alias.x=!…`, `core.pager`, …) and
/// `--config-env`, `--exec-path=DIR` are only known at run time; `--output FILE` writes;
/// `submodule foreach`, `bisect run` and `rebase -x` run commands.
pub fn git(args: &[WordInfo], depth: usize, out: &mut Vec<Command>) {
    let written =
        std::iter::once("git").chain(args.iter().map(|a| a.text.as_str())).collect::<Vec<_>>().join(" ");
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        let text = arg.text.as_str();
        if !text.starts_with('-') {
            break;
        }
        index += 1;
        let setting = match text {
            "-c" => {
                index += 1;
                args.get(index - 1).cloned()
            }
            _ if text.starts_with("-c") => Some(WordInfo { text: text[2..].to_owned(), ..arg.clone() }),
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => {
                index += 1;
                None
            }
            _ if text.starts_with("--config-env") || text.starts_with("--exec-path=") => {
                out.push(Command::dynamic(format!("{written} (`{text}` lets git run programs it names)")));
                None
            }
            _ => None,
        };
        if let Some(setting) = setting {
            let (key, value) = setting.text.split_once('=').unwrap_or((&setting.text, ""));
            let key = key.to_ascii_lowercase();
            if let Some(line) = value.strip_prefix('!').filter(|_| key.starts_with("alias.")) {
                run_line(line, setting.dynamic, depth, out);
            }
            if setting.dynamic || !HARMLESS_GIT_KEYS.iter().any(|k| key.starts_with(k)) {
                out.push(Command::dynamic(format!("{written} (`-c {key}` may make git run a program)")));
            }
        }
    }
    let rest = &args[index.min(args.len())..];
    let texts: Vec<&str> = rest.iter().map(|a| a.text.as_str()).collect();
    for (at, text) in texts.iter().enumerate() {
        if let Some(file) = options::long_value(text, "--output", 3) {
            match file {
                "" if !text.contains('=') => {
                    if let Some(file) = rest.get(at + 1) {
                        writes(file, &written, out);
                    }
                }
                _ => writes(&WordInfo { text: file.to_owned(), ..rest[at].clone() }, &written, out),
            }
        }
    }
    match texts.as_slice() {
        ["submodule", "foreach", ..] => {
            let line = rest[2..]
                .iter()
                .filter(|a| a.text != "--recursive")
                .map(|a| a.text.as_str())
                .collect::<Vec<_>>();
            run_line(&line.join(" "), rest.iter().any(|a| a.dynamic), depth, out);
        }
        ["bisect", "run", ..] => resolve(&rest[2..], depth, out),
        ["rebase", ..] | ["filter-branch", ..] | ["difftool", ..] | ["mergetool", ..] => {
            for (at, text) in texts.iter().enumerate() {
                let value = if matches!(*text, "-x" | "--exec" | "--extcmd" | "-t" | "--tool") {
                    rest.get(at + 1).cloned()
                } else {
                    ["--exec=", "--extcmd=", "-x"]
                        .iter()
                        .find_map(|p| text.strip_prefix(p).filter(|v| !v.is_empty()))
                        .map(|v| WordInfo { text: v.to_owned(), ..rest[at].clone() })
                };
                if let Some(value) = value {
                    run_line(&value.text, value.dynamic, depth, out);
                }
            }
            if texts[0] == "filter-branch" {
                out.push(Command::dynamic(format!("{written} (runs filters it is given)")));
            }
        }
        _ => {}
    }
}
