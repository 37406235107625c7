//! What a simple command runs in turn: the command behind a wrapper and its options
//! (`timeout -s KILL 5 rm`, `setarch x86_64 -R rm`, the dynamic loader run as a program,
//! `runuser -u USER -- rm`), the line a shell, `eval`, `trap`, `watch` or `flock -c` runs,
//! `find -exec … ;` and `find -delete`, and the programs only known at run time
//! (`… | sh`, `python -c`, `awk 'BEGIN{system(…)}'`).

use super::gadgets;
use super::options;
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
        names: &[
            "builtin",
            "nohup",
            "setsid",
            "unbuffer",
            "busybox",
            "eatmydata",
            "nocache",
            "torsocks",
            "firejail",
            "valgrind",
            "catchsegv",
            "dbus-run-session",
            "ssh-agent",
            "rlwrap",
        ],
        valued: &[],
        operands: 0,
        assignments: false,
    },
    // `setarch [ARCH] [OPTIONS] CMD` (the arch is skipped in `see_through`), and the links to
    // it util-linux installs under an architecture's name. None of its options takes a value
    // of its own word.
    Wrapper {
        names: &[
            "setarch",
            "linux32",
            "linux64",
            "uname26",
            "i386",
            "x86_64",
            "ia64",
            "ppc",
            "ppc32",
            "ppc64",
            "sparc",
            "sparc32",
            "sparc32bash",
            "sparc64",
            "s390",
            "s390x",
            "parisc",
            "parisc32",
            "parisc64",
            "mips",
            "mips32",
            "mips64",
        ],
        valued: &[],
        operands: 0,
        assignments: false,
    },
    // The dynamic loader run as a program loads and runs the program it is given
    // (`/lib64/ld-linux-x86-64.so.2 /bin/rm`); every loader's name is read as `ld.so`
    // ([`wrapper`]). Its options take their values as the next word.
    Wrapper {
        names: &[LOADER],
        valued: &[
            "--library-path",
            "--inhibit-rpath",
            "--audit",
            "--preload",
            "--argv0",
            "--glibc-hwcaps-prefix",
            "--glibc-hwcaps-mask",
        ],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        names: &["cpulimit"],
        valued: &[
            "-l", "--limit", "-p", "--pid", "-e", "--exe", "-P", "--path", "-c", "--cpu", "-s", "--signal",
        ],
        operands: 0,
        assignments: false,
    },
    Wrapper { names: &["command"], valued: &[], operands: 0, assignments: false },
    Wrapper { names: &["exec"], valued: &["-a"], operands: 0, assignments: false },
    Wrapper {
        names: &["env"],
        valued: &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
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
    Wrapper {
        names: &["setpriv"],
        valued: &[
            "--reuid",
            "--regid",
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--landlock-access",
            "--landlock-rule",
        ],
        operands: 0,
        assignments: false,
    },
    // The limit options take their values attached (`--nofile=10`, `-n10`).
    Wrapper {
        names: &["prlimit"],
        valued: &["-p", "--pid", "-o", "--output"],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        names: &["unshare"],
        valued: &[
            "-S",
            "--setuid",
            "-G",
            "--setgid",
            "-R",
            "--root",
            "-w",
            "--wd",
            "--map-user",
            "--map-group",
            "--map-users",
            "--map-groups",
            "--propagation",
            "--monotonic",
            "--boottime",
        ],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        names: &["nsenter"],
        valued: &["-t", "--target", "-S", "--setuid", "-G", "--setgid"],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        names: &["fakeroot"],
        valued: &["-l", "--lib", "--faked", "-s", "-i"],
        operands: 0,
        assignments: false,
    },
    Wrapper { names: &["pkexec"], valued: &["--user"], operands: 0, assignments: false },
    Wrapper { names: &["proxychains", "proxychains4"], valued: &["-f"], operands: 0, assignments: false },
    Wrapper { names: &["faketime"], valued: &["-p", "--date-prog"], operands: 1, assignments: false },
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
        valued: &["-w", "--timeout", "-E", "--conflict-exit-code", "-c", "--command"],
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

/// The name every dynamic loader is read under.
const LOADER: &str = "ld.so";

/// The wrapper `name` is, if it is one: a dynamic loader under any of its names
/// (`ld-linux-x86-64.so.2`, `ld-linux-aarch64.so.1`, `ld64.so.2`, `ld-musl-x86_64.so.1`,
/// `ld-2.31.so`) counts as `ld.so`.
fn wrapper(name: &str) -> Option<&'static Wrapper> {
    let loader = ["ld-", "ld.", "ld64."].iter().any(|start| name.starts_with(start)) && name.contains(".so");
    let name = if loader { LOADER } else { name };
    WRAPPERS.iter().find(|w| w.names.contains(&name))
}

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
    if let Some(wrapper) = wrapper(&name) {
        see_through(wrapper, &name, args, depth, out);
    } else if SHELLS.contains(&name.as_str()) {
        shell(&name, args, depth, out);
    } else {
        match name.as_str() {
            "eval" => run_line(&joined_args(args), args.iter().any(|a| a.dynamic), depth, out),
            "trap" => trap(args, depth, out),
            "su" | "runuser" | "script" => {
                if let Some(line) = command_option(args) {
                    run_line(&line.text, line.dynamic, depth, out);
                }
                if name == "runuser" {
                    runuser_command(args, depth, out);
                }
            }
            "find" => find(args, depth, out),
            "git" => gadgets::git(args, depth, out),
            "tar" | "gtar" => gadgets::tar(args, depth, out),
            "sed" | "gsed" => gadgets::sed(args, depth, out),
            _ if gadgets::interpreter(&name) && !gadgets::only_asks_for_version(args) => {
                out.push(Command::dynamic(format!(
                    "{} (runs code from its arguments, a file or stdin, which no rule can see)",
                    joined(&name)
                )))
            }
            // dash expands aliases even in `sh -c`: what an alias stands for may run.
            "alias" => {
                for arg in args {
                    if let Some((_, value)) = arg.text.split_once('=') {
                        // Where the alias is used, more arguments follow what it stands for.
                        let before = out.len();
                        run_line(value, arg.dynamic, depth, out);
                        more_arguments_at_run_time(before, out);
                    }
                }
            }
            "." | "source" => out.push(Command::dynamic(format!(
                "{} (runs the commands of a file, which no rule can see)",
                joined(&name)
            ))),
            _ if gadgets::is_awk(&name) && gadgets::awk_runs_or_writes(args) => out.push(Command::dynamic(
                format!("{} (an awk program that runs commands or writes files)", joined(&name)),
            )),
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
    // `setarch ARCH -R CMD`: the architecture comes before the options, and only when the
    // first word is no option (without it, setarch emulates the machine's own).
    let mut index = usize::from(name == "setarch" && args.first().is_some_and(|a| !a.text.starts_with('-')));
    let mut split_string: Option<WordInfo> = None;
    let mut flock_command: Option<WordInfo> = None;
    let mut replace: Option<String> = None;
    while let Some(arg) = args.get(index) {
        if arg.text == "--" {
            index += 1;
            break;
        }
        if wrapper.assignments && is_assignment(&arg.text) {
            index += 1;
            continue;
        }
        // `env -` is `env -i`; `xargs -iR` replaces R (the value is optional, so attached).
        if name == "env" && arg.text == "-" {
            index += 1;
            continue;
        }
        if name == "xargs"
            && let Some(attached) = arg.text.strip_prefix("-i")
        {
            replace = Some(if attached.is_empty() { "{}" } else { attached }.to_owned());
            index += 1;
            continue;
        }
        let Some(found) = options::read(args, &mut index, wrapper.valued) else { break };
        for option in found {
            match (name, option.name.as_str()) {
                ("env", "-S" | "--split-string") => split_string = option.value,
                ("flock", "-c" | "--command") => flock_command = option.value,
                ("xargs", "-I") => replace = option.value.map(|v| v.text),
                ("xargs", "-i" | "--replace") => {
                    replace = Some(option.value.map_or_else(|| "{}".to_owned(), |v| v.text))
                }
                _ => {}
            }
        }
    }
    if let Some(split) = split_string {
        // `env -S 'rm -rf x'` splits the string into the command and its first arguments;
        // its own escapes (`\_`) and `${VAR}` are not shell syntax, so they are not read.
        let line = format!("{} {}", split.text, joined_args(&args[index.min(args.len())..]));
        let dynamic = split.dynamic || split.text.contains(['\\', '$']);
        run_line(&line, dynamic, depth, out);
        return;
    }
    if let Some(command) = flock_command {
        return run_line(&command.text, command.dynamic, depth, out);
    }
    let index = index.min(args.len());
    let operands = wrapper.operands.min(args.len() - index);
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
    let substituted: Vec<WordInfo>;
    if name == "xargs" {
        if rest.is_empty() {
            rest = &echo;
        }
        // `xargs -I{} sh -c {}`: each word holding the replace string is run-time text.
        if let Some(replace) = replace.filter(|r| !r.is_empty()) {
            substituted = rest
                .iter()
                .map(|a| match a.text.contains(&replace) {
                    true => WordInfo { dynamic: true, literal: false, ..a.clone() },
                    false => a.clone(),
                })
                .collect();
            rest = &substituted;
        }
    }
    let before = out.len();
    resolve(rest, depth, out);
    if name == "xargs" {
        more_arguments_at_run_time(before, out);
    }
}

/// The commands from `before` on get more arguments at run time (`xargs nice rm`, an
/// alias): a rule matches if some continuation would, and a program that runs what its
/// arguments say (`xargs env`, `xargs find .`) runs something only known at run time.
fn more_arguments_at_run_time(before: usize, out: &mut Vec<Command>) {
    let mut runs_them = None;
    for command in &mut out[before..] {
        command.open_ended = true;
        let program = command.text.split(' ').next().unwrap_or_default();
        if runs_its_arguments(program) {
            runs_them = Some(command.text.clone());
        }
    }
    if let Some(text) = runs_them {
        out.push(Command::dynamic(format!(
            "{text} (gets more arguments at run time, which may make it run anything)"
        )));
    }
}

/// Programs whose arguments may name a command for them to run. (`sed`, `git`, `tar` and
/// awk could too, but what xargs appends to them is their file operands; a shell given its
/// `-c` line takes them as `$1`…, and one without is dynamic already.)
fn runs_its_arguments(name: &str) -> bool {
    wrapper(name).is_some()
        || gadgets::interpreter(name)
        || matches!(name, "find" | "su" | "runuser" | "script" | "parallel")
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
                // Each `o`/`O` in a cluster takes the next word (`sh -co errexit 'line'`).
                index += cluster.chars().filter(|c| matches!(c, 'o' | 'O')).count();
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
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                if let Some(file) = args.get(index + 1) {
                    gadgets::writes(file, &format!("find … {} {}", arg.text, file.text), out);
                }
                index += 1;
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

/// `runuser -u USER [--] CMD …` runs CMD itself, no shell between. Its options are read
/// wherever they stand (getopt permutes them) up to `--`; the words left, in order, are the
/// command.
fn runuser_command(args: &[WordInfo], depth: usize, out: &mut Vec<Command>) {
    let mut command = Vec::new();
    let mut user_given = false;
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        if arg.text == "--" {
            command.extend_from_slice(&args[index + 1..]);
            break;
        }
        // `-` is `--login`.
        if arg.text == "-" {
            index += 1;
            continue;
        }
        match options::read(args, &mut index, SU_VALUED) {
            Some(found) => user_given |= found.iter().any(|o| matches!(o.name.as_str(), "-u" | "--user")),
            None => {
                command.push(arg.clone());
                index += 1;
            }
        }
    }
    if user_given {
        resolve(&command, depth, out);
    }
}

/// Options of `su`, `runuser` and `script` that take a value.
const SU_VALUED: &[&str] = &[
    "-c",
    "--command",
    "-C",
    "--session-command",
    "-g",
    "--group",
    "-G",
    "--supp-group",
    "-s",
    "--shell",
    "-w",
    "--whitelist-environment",
    "-u",
    "--user",
    "-E",
    "--echo",
    "-I",
    "--log-in",
    "-O",
    "--log-out",
    "-B",
    "--log-io",
    "-T",
    "--log-timing",
    "-m",
    "--logging-format",
];

/// The `-c` line of `su`, `runuser` or `script`, options read letter by letter wherever
/// they stand (`su -lc 'line'`, `script -qc 'line' /dev/null`, `--command=line`).
fn command_option(args: &[WordInfo]) -> Option<WordInfo> {
    let mut index = 0;
    while index < args.len() {
        match options::read(args, &mut index, SU_VALUED) {
            Some(found) => {
                if let Some(line) = found
                    .into_iter()
                    .find(|o| matches!(o.name.as_str(), "-c" | "--command" | "-C" | "--session-command"))
                {
                    return line.value;
                }
            }
            None => index += 1,
        }
    }
    None
}
