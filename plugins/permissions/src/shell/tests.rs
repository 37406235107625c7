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
