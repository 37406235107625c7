//! The reader on the lines of issue 17 and on the everyday lines allow rules must keep.

use super::read;

/// The texts of the commands `line` may run, and whether any is dynamic.
fn runs(line: &str) -> (Vec<String>, bool) {
    let reading = read(line);
    (reading.runs.iter().map(|c| c.text.clone()).collect(), reading.runs.iter().any(|c| c.dynamic))
}

fn runs_rm(line: &str) -> bool {
    let (texts, _) = runs(line);
    texts.iter().any(|t| t == "rm" || t.starts_with("rm "))
}

#[test]
fn literal_lines_are_allowable() {
    assert_eq!(read("git status").allowable, Some(vec!["git status".to_owned()]));
    assert_eq!(
        read("git 'log' \"--oneline\" -n\\ 3 2>&1 | head -5 >/dev/null").allowable,
        Some(vec!["git log --oneline -n 3".to_owned(), "head -5".to_owned()])
    );
    assert_eq!(read("cat <<'EOF'\n$x\nEOF\n").allowable, Some(vec!["cat".to_owned()]));
    assert_eq!(read("make CC=cc all").allowable, Some(vec!["make CC=cc all".to_owned()]));
}

#[test]
fn what_cannot_be_read_to_the_end_is_not_allowable() {
    for line in [
        "git status $'\\' ; touch X ; #'",
        "git status $\"x\"",
        "git status $(touch X)",
        "git status `touch X`",
        "git status $HOME",
        "git status ${x:-y}",
        "echo $((1+2))",
        "PAGER=x git log",
        "git status > out.txt",
        "git status >> out.txt",
        "git status &>/dev/null",
        "cat <<EOF\n$(touch X)\nEOF\n",
        "cat <<< hi",
        "f() { git status; }",
        "if true; then git status; fi",
        "(git status)",
        "ls *.rs",
        "echo {a,b}",
        "ls ~",
        "echo 'unterminated",
        "diff <(ls) <(ls)",
        "sh -c 'git status'",
        "bash -lc 'git status'",
        "eval git status",
        "trap 'git status' EXIT",
        ". ./env.sh",
        "git status | sh",
        "python3 -c 'print(1)'",
        "perl -e 'print 1'",
        "node -e 1",
        "awk 'BEGIN{system(\"id\")}'",
    ] {
        assert_eq!(read(line).allowable, None, "{line:?} must not be allowable");
    }
}

#[test]
fn a_quote_in_a_comment_hides_nothing() {
    let reading = read("git status #'\ntouch X");
    assert_eq!(reading.allowable, Some(vec!["git status".to_owned(), "touch X".to_owned()]));
}

#[test]
fn dash_reading_of_ansi_c_quotes_is_seen() {
    let (texts, _) = runs("git status $'\\' ; touch X ; #'");
    assert!(texts.iter().any(|t| t == "touch X"), "{texts:?}");
}

#[test]
fn deny_rules_see_through_wrappers_and_nesting() {
    for line in [
        "</dev/null rm -rf x",
        "/bin/rm -rf x",
        "'r'm -rf x",
        "\\rm -rf x",
        "X=1 rm -rf x",
        "command rm x",
        "exec rm x",
        "builtin rm x",
        "env -S 'rm -rf ./x/'",
        "env -S'rm -rf ./x/'",
        "env -u HOME -i A=1 rm x",
        "timeout -s KILL 5 rm -rf x",
        "timeout 5 rm -rf x",
        "flock /tmp/l rm -rf x",
        "flock /tmp/l -c 'rm -rf x'",
        "flock -w 3 /tmp/l rm x",
        "xargs -n 1 -P 4 rm",
        "sudo -u root rm x",
        "doas -u root rm x",
        "nice -n 5 rm x",
        "nohup rm x",
        "time -p rm x",
        "strace -o /tmp/t rm x",
        "stdbuf -oL rm x",
        "ionice -c 3 rm x",
        "setsid rm x",
        "chroot / rm x",
        "watch -n 1 rm x",
        "find . -name f -exec rm {} +",
        "find . -name f -execdir rm {} ';'",
        "find . -name f -ok rm {} \\;",
        "find . -name f -delete",
        "sh -c 'rm -rf x'",
        "sh -c -e 'rm -rf x'",
        "bash -c -- 'rm -rf x'",
        "bash -lc 'rm -rf x'",
        "busybox sh -c 'rm x'",
        "eval 'rm -rf x'",
        "eval rm -rf x",
        "trap 'rm -rf x' EXIT",
        "(rm x)",
        "{ rm x; }",
        "echo $(rm x)",
        "echo `rm x`",
        "echo \"$(rm x)\"",
        "echo ${a:-$(rm x)}",
        "cat <(rm x)",
        "for f in a; do rm $f; done",
        "if true; then rm x; fi",
        "while false; do rm x; done",
        "case a in a) rm x;; esac",
        "f() { rm x; }; f",
        "true && rm x",
        "true | rm x",
        "cat <<EOF\n$(rm x)\nEOF\n",
        "sudo timeout 5 env A=1 nice -n 2 rm x",
        "alias r='rm -rf'\nr x",
        "alias r=rm\nr -rf x",
    ] {
        assert!(runs_rm(line), "{line:?} runs rm: {:?}", runs(line).0);
    }
}

#[test]
fn the_loader_setarch_runuser_and_cpulimit_run_their_argument() {
    for line in [
        "/lib64/ld-linux-x86-64.so.2 /bin/rm -rf x",
        "/lib/ld-linux-aarch64.so.1 rm x",
        "/lib/ld-musl-x86_64.so.1 rm x",
        "/lib64/ld64.so.2 rm x",
        "/usr/lib/ld-2.31.so rm x",
        "ld.so rm x",
        "/lib64/ld-linux-x86-64.so.2 --library-path /tmp --preload x.so --argv0 ls /bin/rm -rf x",
        "/lib64/ld-linux-x86-64.so.2 --inhibit-cache -- /bin/rm x",
        "setarch x86_64 rm -rf x",
        "setarch x86_64 -R --3gb rm -rf x",
        "setarch -R rm x",
        "setarch i386 --addr-no-randomize -- rm x",
        "setarch -R x86_64 rm x",
        "linux32 rm x",
        "linux64 -R rm x",
        "i386 rm x",
        "x86_64 -v rm x",
        "uname26 rm x",
        "runuser -u root -- rm -rf x",
        "runuser -u root rm x",
        "runuser --user=root -- rm -rf x",
        "runuser -u root -g wheel -- /bin/rm x",
        "runuser - -u root -- rm x",
        "runuser -l root -c 'rm -rf x'",
        "runuser root -- -c 'rm -rf x'",
        "cpulimit -l 50 rm -rf x",
        "cpulimit --limit=50 -- rm -rf x",
        "cpulimit -l50 -z -i rm x",
        "cpulimit -c 2 --limit 10 rm x",
        "sudo setarch x86_64 nice /lib64/ld-linux-x86-64.so.2 /bin/rm x",
        "xargs setarch x86_64 rm",
    ] {
        assert!(runs_rm(line), "{line:?} runs rm: {:?}", runs(line).0);
    }
    // The loader's tools and a runuser without a user to run a command as run no rm.
    for line in ["ldd /bin/rm", "ldconfig -p", "runuser root", "setarch --list", "cpulimit -p 42 -l 10"] {
        assert!(!runs_rm(line), "{line:?}: {:?}", runs(line).0);
    }
}

#[test]
fn programs_known_only_at_run_time_are_dynamic() {
    for line in [
        "$CMD -rf x",
        "echo rm -rf x | sh",
        "sh script.sh",
        "bash",
        "python -c 'import os'",
        "python3 -Bc 'import os'",
        "perl -e 'unlink 1'",
        "perl -ne 'print'",
        "node -e 'x'",
        "ruby -e 'x'",
        "awk 'BEGIN{system(\"rm x\")}'",
        "eval \"$X\"",
        "env -S \"$X\"",
        "sh -c \"$X\"",
        "echo 'unterminated",
        "r* -rf x",
        ". ./script.sh",
        "source script.sh",
    ] {
        assert!(runs(line).1, "{line:?} is dynamic: {:?}", read(line).runs);
    }
}

#[test]
fn words_that_only_mention_rm_do_not_run_it() {
    for line in ["echo rm -rf build", "git rm file", "grep rm x", "ls # rm x", "echo 'rm x'", "cat rm"] {
        assert!(!runs_rm(line), "{line:?}: {:?}", runs(line).0);
        assert!(!runs(line).1, "{line:?} is not dynamic");
    }
}

#[test]
fn xargs_appending_to_a_shells_line_is_not_dynamic() {
    let (texts, dynamic) = runs("find . -name '*.rs' | xargs sh -c 'wc -l \"$@\"' _");
    assert!(!dynamic && texts.iter().any(|t| t == "wc -l $@"), "{texts:?}");
    assert!(runs("echo 'rm x' | xargs bash -c").1);
    assert!(runs("echo x | xargs su -c").1);
}

#[test]
fn xargs_without_a_program_runs_echo_with_more_arguments() {
    let reading = read("xargs -n 1");
    let echo = reading.runs.iter().find(|c| c.text == "echo").expect("echo");
    assert!(echo.open_ended);
}

#[test]
fn ansi_c_quotes_are_decoded_as_bash_does() {
    for line in ["$'\\x72m' -rf x", "$'\\162m' x", "$'r\\u006d' x"] {
        assert!(runs_rm(line), "{line:?}: {:?}", runs(line).0);
    }
}

#[test]
fn backquotes_unescape_as_the_shell_does() {
    for line in
        ["echo x \"`\\\"rm\\\" -rf /`\"", "echo x \"`rm\\${IFS} -rf /`\"", "echo `echo \\`rm -rf /\\``"]
    {
        let reading = read(line);
        assert!(runs_rm(line) || reading.runs.iter().any(|c| c.dynamic), "{line:?}: {:?}", reading.runs);
    }
    assert!(runs_rm("echo x \"`\\\"rm\\\" -rf /`\""));
}

#[test]
fn lines_too_deep_to_read_count_as_unreadable() {
    let deep = format!("{}rm x{}", "(".repeat(1000), ")".repeat(1000));
    let reading = read(&deep);
    assert!(reading.allowable.is_none());
    assert!(reading.runs.iter().any(|c| c.dynamic), "{:?}", reading.runs);
    assert!(runs_rm(&format!("{}rm x{}", "(".repeat(20), ")".repeat(20))));
}

#[test]
fn double_parentheses_are_subshells_to_dash() {
    assert!(runs_rm("((rm -rf x))"), "{:?}", runs("((rm -rf x))").0);
    assert_eq!(read("((git status))").allowable, None);
}

/// Whether the reading records a write to `file` (as `tee FILE`).
fn writes(line: &str, file: &str) -> bool {
    read(line).runs.iter().any(|c| c.text == format!("tee {file}"))
}

// Issue 29, High 4: constructs the reader claims to model.

#[test]
fn xargs_replace_mode_substitutes_run_time_text() {
    for line in [
        "echo 'rm -rf v1' | xargs -I{} sh -c {}",
        "xargs -I % sh -c %",
        "xargs -i sh -c {}",
        "xargs --replace=X sh -c X",
    ] {
        assert!(runs(line).1, "{line:?} is dynamic: {:?}", read(line).runs);
    }
}

#[test]
fn short_options_are_read_letter_by_letter() {
    for line in [
        "env -iS'rm -rf v2'",
        "env -i -S'rm -rf v2'",
        "env -iu HOME rm x",
        "timeout -sKILL 5 rm x",
        "env --block-signal rm x",
    ] {
        assert!(runs_rm(line), "{line:?} runs rm: {:?}", runs(line).0);
    }
}

#[test]
fn an_interpreter_without_a_code_argument_reads_code_from_stdin_or_a_file() {
    for line in [
        "python3 <<'EOF'\nimport os\nos.system('rm -rf v3')\nEOF\n",
        "python3 - <<'EOF'\nimport os\nEOF\n",
        "perl <<'EOF'\nsystem('rm x')\nEOF\n",
        "node < x.js",
        "ruby script.rb",
        "echo 'rm x' | bash",
        "gdb -batch -ex 'shell rm -rf x'",
        "ed -s f <<'EOF'\n!rm x\nEOF\n",
        "vi -c '!rm x' f",
    ] {
        assert!(runs(line).1, "{line:?} is dynamic: {:?}", read(line).runs);
        assert_eq!(read(line).allowable, None, "{line:?}");
    }
    assert!(!runs("python3 --version").1);
}

// Issue 29, Medium 10: exec and write gadgets.

#[test]
fn exec_gadgets_run_what_they_are_given() {
    for line in [
        "setpriv --reuid 0 rm x",
        "setpriv --no-new-privs rm x",
        "prlimit --nofile=10 rm x",
        "prlimit -p 1 -n rm x",
        "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm -rf x' f",
        "tar -tf a.tar --checkpoint-action exec='rm -rf x'",
        "tar -xf a.tar --to-command='rm -rf x'",
        "tar -xf a.tar --to-com='rm -rf x'",
        "tar -I 'rm -rf x' -tf a.tar",
        "tar -tIrm -f a.tar",
        "tar -tf a.tar -F 'rm x'",
        "tar --use-compress-program='rm x' -tf a.tar",
        "sed -n '1e rm -rf x' f",
        "sed -ne '1e rm -rf x' f",
        "sed --expression='1e rm -rf x' f",
        "sed -n '/a/{e rm -rf x\n}' f",
        "git -c alias.x='!rm -rf x' x",
        "git -c 'alias.x=!rm -rf x' x",
        "git submodule foreach 'rm -rf x'",
        "git rebase -x 'rm -rf x' HEAD~1",
        "git bisect run rm -rf x",
    ] {
        let (texts, dynamic) = runs(line);
        assert!(runs_rm(line) || dynamic, "{line:?} runs rm: {texts:?}");
    }
}

#[test]
fn run_time_gadgets_are_dynamic() {
    for line in [
        "sed 's/.*/rm x/e' f",
        "sed -n 1e f",
        "sed -f script.sed f",
        "git -c core.pager='rm x' log",
        "git -c core.fsmonitor='rm x' status",
        "git --config-env=core.pager=X log",
        "git --exec-path=/tmp/x status",
        "tar -tf host:a.tar",
        "awk '{ print > \"out\" }' f",
        "awk -f prog.awk f",
        "dc -e '!rm x'",
        "sqlite3 db '.shell rm x'",
        "echo -exec rm {} ';' | xargs find .",
        "echo rm x | xargs env",
        "echo x | xargs nice rm",
    ] {
        let (texts, dynamic) = runs(line);
        assert!(dynamic || runs_rm(line), "{line:?} is dynamic: {texts:?}");
    }
}

#[test]
fn write_gadgets_write_their_file() {
    assert!(writes("sed -n '1w out' f", "out"));
    assert!(writes("sed -n '/a/W out' f", "out"));
    assert!(writes("sed -n 's/a/b/w out' f", "out"));
    assert!(writes("sed -i 's/a/b/' f", "f"));
    assert!(writes("sed -ni.bak 's/a/b/' f g", "g"));
    assert!(writes("sed --in-place -n p f", "f"));
    assert!(writes("sed --i=.bak -n p f", "f"));
    assert!(writes("find . -fprint out", "out"));
    assert!(writes("find . -fprintf out '%p'", "out"));
    assert!(writes("find . -fls out", "out"));
    assert!(writes("find . -fprint0 out", "out"));
    assert!(writes("git log --output=out", "out"));
    assert!(writes("git log --output out", "out"));
    assert!(writes("git diff --outp=out", "out"));
    assert!(writes("tar -tf a.tar --index-file=out", "out"));
    // What only reads writes nothing.
    for line in
        ["sed -n 's/hello/world/p' f", "sed -n '1,5p;/x/d' f", "find . -name '*.rs' -print", "git log -n 3"]
    {
        assert!(
            !read(line).runs.iter().any(|c| c.text.starts_with("tee ") || c.dynamic),
            "{line:?}: {:?}",
            read(line).runs
        );
    }
}

/// `-o` inside a cluster takes the next word, so the line comes after it: dash and bash
/// both run `rm x` for `sh -co errexit 'rm x'`.
#[test]
fn a_shell_option_value_in_a_cluster_is_not_the_line() {
    for line in ["sh -co errexit 'rm x'", "bash -eco pipefail 'rm x'", "sh -oc errexit 'rm x'"] {
        assert!(runs_rm(line), "{line:?} runs rm: {:?}", runs(line).0);
    }
}
