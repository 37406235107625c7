//! What a simple command runs in turn: the command behind a wrapper and its options
//! (`timeout -s KILL 5 rm`), the line a shell, `eval`, `trap`, `watch` or `flock -c` runs,
//! `find -exec … ;` and `find -delete`, and the programs only known at run time
//! (`… | sh`, `python -c`, `awk 'BEGIN{system(…)}'`).

use super::runs::{Command, MAX_DEPTH, collect_line};
use super::word::WordInfo;

/// A program that runs the command given after its options and operands.
struct Wrapper {
    names: &'static [&'static str],
    /// Options that take a value (`-n 5`; `-n5` and `--name=5` are read too).
    valued: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`).
    operands: usize,
    /// `NAME=VALUE` words before the command are skipped (`env`, `sudo`).
    assignments: bool,
}

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["builtin", "nohup", "setsid", "unbuffer", "busybox"],
        valued: &[],
        operands: 0,
        assignments: false,
    },
    Wrapper { names: &["command"], valued: &[], operands: 0, assignments: false },
    Wrapper { names: &["exec"], valued: &["-a"], operands: 0, assignments: false },
    Wrapper {
        names: &["env"],
        valued: &[
            "-u",
            "--unset",
            "-C",
            "--chdir",
            "-S",
            "--split-string",
            "--block-signal",
            "--default-signal",
            "--ignore-signal",
        ],
        operands: 0,
        assignments: true,
    },
    Wrapper {
        names: &["sudo"],
        valued: &[
            "-u",
            "--user",
            "-g",
            "--group",
            "-h",
            "--host",
            "-p",
            "--prompt",
            "-C",
            "--close-from",
            "-U",
            "--other-user",
            "-r",
            "--role",
            "-t",
            "--type",
            "-T",
            "--command-timeout",
            "-D",
            "--chdir",
            "-R",
            "--chroot",
        ],
        operands: 0,
        assignments: true,
    },
    Wrapper { names: &["doas"], valued: &["-u", "-C"], operands: 0, assignments: false },
    Wrapper { names: &["nice"], valued: &["-n", "--adjustment"], operands: 0, assignments: false },
    Wrapper {
        names: &["timeout"],
        valued: &["-s", "--signal", "-k", "--kill-after"],
        operands: 1,
        assignments: false,
    },
    Wrapper {
        names: &["time"],
        valued: &["-f", "--format", "-o", "--output"],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        names: &["strace", "ltrace"],
        valued: &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-X", "-P", "-n", "-l", "-w",
        ],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        names: &["stdbuf"],
        valued: &["-i", "--input", "-o", "--output", "-e", "--error"],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        names: &["ionice"],
        valued: &["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "-u"],
        operands: 0,
        assignments: false,
    },
    Wrapper { names: &["chroot"], valued: &["--userspec", "--groups"], operands: 1, assignments: false },
    Wrapper { names: &["chrt", "taskset"], valued: &[], operands: 1, assignments: false },
    Wrapper {
        names: &["flock"],
        valued: &["-w", "--timeout", "-E", "--conflict-exit-code"],
        operands: 1,
        assignments: false,
    },
    Wrapper {
        names: &["xargs"],
        valued: &[
            "-n",
            "--max-args",
            "-P",
            "--max-procs",
            "-L",
            "--max-lines",
            "-s",
            "--max-chars",
            "-d",
            "--delimiter",
            "-E",
            "-I",
            "-a",
            "--arg-file",
            "--process-slot-var",
        ],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        names: &["watch"],
        valued: &["-n", "--interval", "-d", "-q", "--equexit"],
        operands: 0,
        assignments: false,
    },
];

/// Programs that run their `-c` operand as a command line.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish"];

/// Whether `name` is a program that runs command lines or scripts of its own (a shell,
/// `eval`, `trap`, `source`, `alias`): allow rules never vouch for those, whatever follows.
pub fn runs_lines(name: &str) -> bool {
    SHELLS.contains(&name) || matches!(name, "eval" | "trap" | "source" | "." | "busybox" | "alias")
}

/// Options of a shell that take a value.
const SHELL_VALUED: &[&str] = &["-o", "+o", "-O", "+O", "--rcfile", "--init-file"];

/// Adds the command `argv` runs, then what it runs in turn.
pub fn resolve(argv: &[WordInfo], depth: usize, out: &mut Vec<Command>) {
    let Some(program) = argv.first() else { return };
    let name = program.text.rsplit('/').next().unwrap_or_default().to_owned();
    let args = &argv[1..];
    let joined = |first: &str| {
        std::iter::once(first).chain(args.iter().map(|a| a.text.as_str())).collect::<Vec<_>>().join(" ")
    };
    out.push(Command {
        text: joined(&name),
        written: joined(&program.text),
        dynamic: program.dynamic,
        open_ended: false,
    });
    if program.dynamic {
        return;
    }
    if depth >= MAX_DEPTH {
        out.push(Command::dynamic(format!("{} (nested too deeply to read)", joined(&name))));
        return;
    }
    let depth = depth + 1;
    if let Some(wrapper) = WRAPPERS.iter().find(|w| w.names.contains(&name.as_str())) {
        see_through(wrapper, &name, args, depth, out);
    } else if SHELLS.contains(&name.as_str()) {
        shell(&name, args, depth, out);
    } else {
        match name.as_str() {
            "eval" => run_line(&joined_args(args), args.iter().any(|a| a.dynamic), depth, out),
            "trap" => trap(args, depth, out),
            "su" | "runuser" => {
                if let Some(line) = value_of(args, &["-c", "--command"]) {
                    run_line(&line.text, line.dynamic, depth, out);
                }
            }
            "find" => find(args, depth, out),
            // dash expands aliases even in `sh -c`: what an alias stands for may run.
            "alias" => {
                for arg in args {
                    if let Some((_, value)) = arg.text.split_once('=') {
                        // Where the alias is used, more arguments follow what it stands for.
                        let before = out.len();
                        run_line(value, arg.dynamic, depth, out);
                        out[before..].iter_mut().for_each(|c| c.open_ended = true);
                    }
                }
            }
            "." | "source" => out.push(Command::dynamic(format!(
                "{} (runs the commands of a file, which no rule can see)",
                joined(&name)
            ))),
            _ if runs_code_argument(&name, args) => {
                out.push(Command::dynamic(format!("{} (runs code given on its command line)", joined(&name))))
            }
            _ => {}
        }
    }
}

fn joined_args(args: &[WordInfo]) -> String {
    args.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" ")
}

/// Adds what `line` runs, or a dynamic command when the line is only known at run time.
fn run_line(line: &str, dynamic: bool, depth: usize, out: &mut Vec<Command>) {
    if dynamic {
        out.push(Command::dynamic(format!("{line} (a command line only known at run time)")));
    }
    collect_line(line, depth, out);
}

/// Skips the wrapper's options, values and operands; the rest is the command it runs.
fn see_through(wrapper: &Wrapper, name: &str, args: &[WordInfo], depth: usize, out: &mut Vec<Command>) {
    let mut index = 0;
    let mut split_string: Option<&WordInfo> = None;
    let mut flock_command: Option<&WordInfo> = None;
    while let Some(arg) = args.get(index) {
        let text = arg.text.as_str();
        if text == "--" {
            index += 1;
            break;
        }
        if wrapper.assignments && is_assignment(text) {
            index += 1;
            continue;
        }
        let Some((option, attached)) = option_parts(text, wrapper.valued) else { break };
        let value = match attached {
            Some(_) => None,
            None if takes_value(&option, wrapper.valued) => {
                index += 1;
                args.get(index)
            }
            None => None,
        };
        if name == "env" && (option == "-S" || option == "--split-string") {
            split_string = value.or(Some(arg));
        }
        if name == "flock" && (option == "-c" || option == "--command") {
            flock_command = args.get(index + 1);
            index += 1;
        }
        index += 1;
    }
    if let Some(split) = split_string {
        // `env -S 'rm -rf x'` splits the string into the command and its first arguments.
        let string = split.text.strip_prefix("-S").unwrap_or(&split.text);
        let string = string.strip_prefix("--split-string=").unwrap_or(string);
        let line = format!("{string} {}", joined_args(&args[index..]));
        run_line(&line, split.dynamic, depth, out);
        return;
    }
    if let Some(command) = flock_command {
        return run_line(&command.text, command.dynamic, depth, out);
    }
    let operands = wrapper.operands.min(args.len().saturating_sub(index));
    let mut rest = &args[index + operands..];
    if name == "flock"
        && let Some(first) = rest.first()
        && (first.text == "-c" || first.text == "--command")
    {
        // `flock FILE -c 'line'` runs the line with a shell.
        if let Some(line) = rest.get(1) {
            run_line(&line.text, line.dynamic, depth, out);
        }
        return;
    }
    if name == "watch" {
        // watch joins its arguments and runs them with `sh -c`.
        return run_line(&joined_args(rest), rest.iter().any(|a| a.dynamic), depth, out);
    }
    let echo = [WordInfo { text: "echo".into(), literal: true, ..WordInfo::default() }];
    if name == "xargs" && rest.is_empty() {
        rest = &echo;
    }
    let before = out.len();
    resolve(rest, depth, out);
    if name == "xargs"
        && let Some(first) = out.get_mut(before)
    {
        first.open_ended = true;
    }
}

/// `-n`, `--name` and their attached forms (`-n5`, `--name=5`) as (option, attached value).
/// Not an option: `None`.
fn option_parts(text: &str, valued: &[&str]) -> Option<(String, Option<String>)> {
    if let Some(long) = text.strip_prefix("--") {
        if long.is_empty() {
            return None;
        }
        return Some(match long.split_once('=') {
            Some((name, value)) => (format!("--{name}"), Some(value.to_owned())),
            None => (text.to_owned(), None),
        });
    }
    let short = text.strip_prefix('-')?;
    let first = short.chars().next()?;
    // `nice -5` and `-oL` style clusters: the first letter names the option.
    let option = format!("-{first}");
    let rest = &short[first.len_utf8()..];
    if takes_value(&option, valued) && !rest.is_empty() {
        return Some((option, Some(rest.to_owned())));
    }
    // A cluster of flags ending in one that takes a value (`-fn 5` style) is not common
    // among these wrappers; the last letter decides.
    let last = format!("-{}", short.chars().last()?);
    if rest.is_empty() || !takes_value(&last, valued) {
        Some((option, if rest.is_empty() { None } else { Some(String::new()) }))
    } else {
        Some((last, None))
    }
}

fn takes_value(option: &str, valued: &[&str]) -> bool {
    valued.contains(&option)
}

fn is_assignment(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// A shell runs its `-c` operand; without one it reads a script from a file or stdin,
/// which no rule can see.
fn shell(name: &str, args: &[WordInfo], depth: usize, out: &mut Vec<Command>) {
    let mut has_c = false;
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        let text = arg.text.as_str();
        if text == "--" || text == "-" {
            index += 1;
            break;
        }
        if SHELL_VALUED.contains(&text) {
            index += 2;
            continue;
        }
        let cluster = text.strip_prefix('-').or_else(|| text.strip_prefix('+'));
        match cluster {
            Some(cluster) if !cluster.is_empty() && !text.starts_with("--") => {
                has_c |= text.starts_with('-') && cluster.contains('c');
            }
            Some(_) if text.starts_with("--") => {}
            _ => break,
        }
        index += 1;
    }
    match (has_c, args.get(index)) {
        (true, Some(line)) => run_line(&line.text, line.dynamic, depth, out),
        _ => out.push(Command::dynamic(format!(
            "{name} (reads its commands from a file or stdin, which no rule can see)"
        ))),
    }
}

/// `trap 'line' SIGNAL…` runs the line when the signal comes (or the shell exits).
fn trap(args: &[WordInfo], depth: usize, out: &mut Vec<Command>) {
    let args = match args.first() {
        Some(first) if first.text == "--" => &args[1..],
        _ => args,
    };
    if let Some(action) = args.first()
        && args.len() > 1
        && !action.text.starts_with('-')
    {
        run_line(&action.text, action.dynamic, depth, out);
    }
}

/// `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`) runs CMD; `-delete` removes
/// what it finds, so it counts as `rm -rf` of its starting points.
fn find(args: &[WordInfo], depth: usize, out: &mut Vec<Command>) {
    let starts: Vec<&str> = args
        .iter()
        .map(|a| a.text.as_str())
        .take_while(|t| !t.starts_with('-') && *t != "(" && *t != "!")
        .collect();
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        match arg.text.as_str() {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = args[index + 1..]
                    .iter()
                    .position(|a| a.text == ";" || a.text == "+")
                    .map_or(args.len(), |p| index + 1 + p);
                resolve(&args[index + 1..end], depth, out);
                index = end;
            }
            "-delete" => {
                let starts = if starts.is_empty() { ".".to_owned() } else { starts.join(" ") };
                out.push(Command {
                    text: format!("rm -rf {starts}"),
                    written: format!("find {starts} -delete"),
                    dynamic: false,
                    open_ended: false,
                });
            }
            _ => {}
        }
        index += 1;
    }
}

/// The value of the first of `options` in `args` (`-c line`, `-cline`, `--command=line`).
fn value_of(args: &[WordInfo], options: &[&str]) -> Option<WordInfo> {
    for (index, arg) in args.iter().enumerate() {
        for option in options {
            if arg.text == *option {
                return args.get(index + 1).cloned();
            }
            if let Some(value) = arg.text.strip_prefix(&format!("{option}=")) {
                return Some(WordInfo { text: value.to_owned(), ..arg.clone() });
            }
        }
    }
    None
}

/// Interpreters given their program on the command line (`python -c`, `perl -e`,
/// `node -e`, `ruby -e`, `php -r`, `lua -e`), and awk programs that start commands.
fn runs_code_argument(name: &str, args: &[WordInfo]) -> bool {
    let flags: &[char] = match name {
        _ if name.starts_with("python") || name == "pypy" || name == "pypy3" => &['c'],
        _ if name.starts_with("perl") || name == "ruby" || name == "lua" || name.starts_with("lua5") => {
            &['e', 'E']
        }
        "node" | "nodejs" | "bun" => &['e', 'p'],
        "php" => &['r'],
        "deno" => return args.first().is_some_and(|a| a.text == "eval"),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => {
            return args
                .iter()
                .any(|a| a.text.contains("system") || a.text.contains('|') || a.text.starts_with("-f"));
        }
        _ => return false,
    };
    args.iter().any(|a| {
        let text = a.text.as_str();
        matches!(text, "--eval" | "--print" | "--command")
            || text.strip_prefix('-').is_some_and(|c| !c.starts_with('-') && c.contains(flags))
    })
}
