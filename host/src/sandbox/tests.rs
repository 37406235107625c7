//! The library API on the real kernel, with real `sh`: what a confined program sees.

use std::time::Duration;

use super::{Rlimits, RunLimits, RunOutput, Sandbox, SandboxSpec};

fn limits() -> RunLimits {
    RunLimits { timeout: Duration::from_secs(10), max_output_bytes: 1 << 20 }
}

async fn sh(spec: SandboxSpec) -> RunOutput {
    Sandbox::confined().expect("this kernel builds the sandbox").run(&spec, limits()).await.expect("it runs")
}

fn shell(line: &str) -> SandboxSpec {
    SandboxSpec::new("/bin/sh").arg("-c").arg(line)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn a_program_runs_as_pid_1_seeing_only_its_own_processes() {
    let output = sh(shell("echo $$; ls /proc | grep -c '^[0-9]'; id -u")).await;
    assert_eq!(output.status, Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "1", "{stdout}");
    // sh, ls and grep, maybe id not yet: far fewer than the host's.
    assert!(lines[1].parse::<u32>().unwrap() <= 4, "{stdout}");
    assert_eq!(lines[2], "1000", "{stdout}");
}

#[tokio::test]
async fn bash_process_substitution_works_on_the_read_only_proc() {
    let line = "cat <(echo in); echo out > >(cat); wait $!; echo 5 > /proc/self/oom_score_adj 2>/dev/null || echo ro";
    let output = sh(SandboxSpec::new("/bin/bash").arg("-c").arg(line)).await;
    let stdout = text(&output.stdout);
    assert!(
        stdout.starts_with(
            "in
"
        ) && stdout.contains(
            "out
"
        ) && stdout.contains(
            "ro
"
        ),
        "{stdout} {}",
        text(&output.stderr)
    );
}

#[tokio::test]
async fn the_environment_is_only_what_the_spec_sets() {
    let output = sh(shell("env").env("ONLY", "this")).await;
    let stdout = text(&output.stdout);
    let mut names: Vec<&str> = stdout.lines().filter_map(|l| l.split('=').next()).collect();
    names.sort();
    // dash adds PWD itself.
    assert_eq!(names, ["ONLY", "PWD"], "{stdout}");
}

#[tokio::test]
async fn a_root_only_file_of_etc_is_unreadable_and_the_system_is_read_only() {
    let output = sh(shell(
        "cat /etc/shadow >/dev/null 2>&1 && echo shadow-read; \
         touch /etc/x 2>/dev/null && echo etc-written; touch /usr/x 2>/dev/null && echo usr-written; \
         touch /x 2>/dev/null && echo root-written; touch /dev/x 2>/dev/null && echo dev-written; \
         [ -w /proc/sysrq-trigger ] && echo sysrq-writable; \
         echo sandbox > /proc/sys/kernel/domainname 2>/dev/null && echo sysctl-written; \
         echo > /dev/null && cat /etc/passwd >/dev/null && echo passwd-read",
    ))
    .await;
    assert_eq!(text(&output.stdout), "passwd-read\n", "{}", text(&output.stderr));
}

#[tokio::test]
async fn granted_folders_are_writable_only_where_asked_and_tmp_is_private() {
    let writable = tempfile::tempdir().unwrap();
    let readable = tempfile::tempdir().unwrap();
    std::fs::write(readable.path().join("in"), "seen").unwrap();
    let marker = format!("sandbox-tmp-{}", std::process::id());
    let line = format!(
        "cat {r}/in; touch {r}/new 2>/dev/null && echo ro-written; echo made > {w}/out; \
         echo t > /tmp/{marker}; ls /tmp",
        r = readable.path().display(),
        w = writable.path().display()
    );
    let spec = shell(&line).read_only(readable.path()).read_write(writable.path()).workdir(writable.path());
    let output = sh(spec).await;
    let stdout = text(&output.stdout);
    assert!(stdout.starts_with("seen"), "{stdout} {}", text(&output.stderr));
    assert!(!stdout.contains("ro-written"), "{stdout}");
    assert_eq!(std::fs::read_to_string(writable.path().join("out")).unwrap(), "made\n");
    assert!(!std::path::Path::new("/tmp").join(&marker).exists(), "the sandbox's /tmp is its own");
}

#[tokio::test]
async fn a_folder_whose_path_passes_through_a_symlink_is_refused_naming_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("real/inner")).unwrap();
    std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
    for (folder, link) in
        [(root.join("link"), root.join("link")), (root.join("link/inner"), root.join("link"))]
    {
        let spec = shell("echo ran > here").read_write(&folder).workdir(&folder);
        let error = Sandbox::confined().unwrap().run(&spec, limits()).await.expect_err("refused").to_string();
        assert_eq!(
            error,
            format!(
                "{} is a symbolic link now (it was not when the config was loaded); a granted folder is \
                 opened without following links, so {} is not shown",
                link.display(),
                folder.display()
            )
        );
    }
    assert!(!root.join("real/here").exists() && !root.join("real/inner/here").exists());
}

#[tokio::test]
async fn a_folder_inside_a_writable_one_is_bound_after_it_whatever_the_order_given() {
    let dir = tempfile::tempdir().unwrap();
    let outer = dir.path().canonicalize().unwrap();
    let inner = outer.join("docs");
    std::fs::create_dir(&inner).unwrap();
    let line = format!("touch {}/written && echo inner-writable; touch outer-written", inner.display());
    // Given child first, as grants in guest-name order (`/docs` before `/workspace`) were.
    let spec = shell(&line).read_only(&inner).read_write(&outer).workdir(&outer);
    let output = sh(spec).await;
    assert!(!text(&output.stdout).contains("inner-writable"), "{}", text(&output.stdout));
    assert!(text(&output.stderr).contains("Read-only file system"), "{}", text(&output.stderr));
    assert!(!inner.join("written").exists());
    assert!(outer.join("outer-written").exists(), "{}", text(&output.stderr));
}

#[tokio::test]
async fn bind_ro_places_a_file_over_a_system_one() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("rm");
    std::fs::write(&fake, "#!/bin/sh\necho recorded \"$@\"\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = sh(shell("rm -rf /nothing").bind_ro(&fake, "/usr/bin/rm")).await;
    assert_eq!(text(&output.stdout), "recorded -rf /nothing\n", "{}", text(&output.stderr));
}

#[tokio::test]
async fn the_network_is_off_unless_asked() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let line = format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo connected");
    let off = sh(shell(&line)).await;
    assert_eq!(text(&off.stdout), "", "{}", text(&off.stderr));
    let on = sh(shell(&line).network(true)).await;
    assert_eq!(text(&on.stdout), "connected\n", "{}", text(&on.stderr));
}

#[tokio::test]
async fn rlimits_hold() {
    let rlimits = Rlimits { cpu_secs: 7, memory_mb: 512, max_procs: 33, file_mb: 1 };
    let output = sh(SandboxSpec::new("/bin/bash")
        .arg("-c")
        .arg("ulimit -t; ulimit -v; ulimit -u; ulimit -f; head -c 2097152 /dev/zero > /tmp/big; echo $?; wc -c < /tmp/big")
        .rlimits(rlimits))
    .await;
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    // bash reports -v and -f in KiB (and 512-byte blocks for -f in POSIX mode only).
    assert_eq!(lines[..4], ["7", "524288", "33", "1024"], "{stdout}");
    assert_ne!(lines[4], "0", "the write past the file limit fails: {stdout}");
    assert_eq!(lines[5], "1048576", "{stdout}");
}

#[tokio::test]
async fn everything_the_program_started_dies_with_it() {
    let started = std::time::Instant::now();
    let output = sh(shell("sleep 20 & setsid sh -c 'sleep 20' & echo started")).await;
    assert_eq!(text(&output.stdout), "started\n");
    assert!(started.elapsed() < Duration::from_secs(15), "the background sleeps held the run");
    assert!(!output.timed_out);
}

#[tokio::test]
async fn at_the_deadline_the_whole_namespace_is_killed() {
    let spec = shell("echo before; sleep 20 & sleep 30; echo after");
    let output = Sandbox::confined()
        .unwrap()
        .run(&spec, RunLimits { timeout: Duration::from_millis(300), max_output_bytes: 1024 })
        .await
        .unwrap();
    assert!(output.timed_out);
    assert_eq!(output.status, None);
    assert_eq!(text(&output.stdout), "before\n");
}

#[tokio::test]
async fn a_failed_setup_step_is_named() {
    let error = Sandbox::confined()
        .unwrap()
        .run(&shell("true").workdir("/no/such/folder"), limits())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("chdir to the working folder"), "{error}");
}

/// Host processes whose command line holds `marker`.
fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .filter(|cmdline| cmdline.windows(marker.len()).any(|window| window == marker.as_bytes()))
        .count()
}

#[tokio::test]
async fn a_dropped_run_takes_the_namespace_with_it() {
    let marker = format!("dropped-run-{}", std::process::id());
    let line = format!("setsid sh -c 'sleep 30; echo {marker}' & sh -c 'sleep 30; echo {marker}'");
    let run = tokio::spawn(async move { sh(shell(&line)).await });
    // Generous too: on a loaded two-core machine starting the namespace has taken over 5 s.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    // PID 1's command line holds the marker too (and, for a moment, a fork of it; once the
    // outer shell execs its last command, one process fewer): what counts is that all were
    // seen at once before the run is dropped, not how many are left when counted again.
    let mut started = false;
    while !started && std::time::Instant::now() < deadline {
        started = processes_with(&marker) >= 3;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(started, "PID 1 and both shells started");
    run.abort();
    let _ = run.await;
    // Generous: the kill is immediate, but on a loaded two-core machine the reaping of a
    // killed namespace's processes has been seen to take more than 5 s.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while processes_with(&marker) > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(processes_with(&marker), 0, "a process of the dropped run survived");
}

#[tokio::test]
async fn the_process_limit_holds_even_for_a_host_running_as_root() {
    // 350 is above the floor of the PID namespace's pid_max (see `plan::pid_max`). Counted
    // with builtins: at the limit nothing more can fork.
    let rlimits = Rlimits { max_procs: 350, ..Rlimits::default() };
    // A shell ends at a fork that fails, so the loop runs in a subshell of its own.
    let line = "(for i in $(seq 1 400); do sleep 5 & done) 2>/dev/null; set -- /proc/[0-9]*; echo $#";
    let output = sh(shell(line).rlimits(rlimits)).await;
    let running: u32 = text(&output.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{:?} {}", output.status, text(&output.stderr)));
    assert!(running <= 350, "{running} processes under a limit of 350");
    assert!(running > 300, "the sleeps did start: {running}");
}

#[tokio::test]
async fn keyrings_bpf_io_uring_and_nested_user_namespaces_are_refused() {
    // Each call is made for real (perl's `syscall`), and its errno printed.
    let calls = r#"require "syscall.ph"; my $b = "\0" x 256;
        for my $call (["keyctl", &SYS_keyctl, 0, -3, 0], ["add_key", &SYS_add_key, "user", "k", "v", 1, -3],
                      ["bpf", &SYS_bpf, 0, $b, 64], ["io_uring_setup", &SYS_io_uring_setup, 1, $b]) {
            my ($name, $nr, @args) = @$call; my $r = syscall($nr, @args); print "$name=", ($r < 0 ? $! + 0 : "ok"), "\n" }"#;
    let line = format!(
        "perl -e '{calls}'; unshare -U true 2>/dev/null && echo nested-userns; \
         python3 -c 'import ctypes, sys; sys.exit(ctypes.CDLL(None).unshare(0x10000000))' && echo python-userns; \
         (sleep 0 & wait) && echo forks"
    );
    let output = sh(shell(&line)).await;
    assert_eq!(
        text(&output.stdout),
        "keyctl=1\nadd_key=1\nbpf=1\nio_uring_setup=1\nforks\n",
        "{}",
        text(&output.stderr)
    );
}

/// Eight background processes that each hold 64 MiB, then what they hold together (the
/// resident memory of every process of the sandbox).
const MEMORY_HOGS: &str = "for i in 1 2 3 4 5 6 7 8; do \
      python3 -c 'import time; b = b\"x\" * (64 << 20); print(\"held\", flush=True); time.sleep(4)' & done; \
    sleep 2; cat /proc/[0-9]*/status | awk '/VmRSS/ { kb += $2 } END { print \"rss_mib=\" int(kb / 1024) }'; \
    kill $(jobs -p) 2>/dev/null; wait";

/// The figure after `name=` in `output`.
fn figure(output: &str, name: &str) -> u64 {
    output
        .split(&format!("{name}="))
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {output}"))
}

#[tokio::test]
async fn the_memory_limit_bounds_the_command_as_a_whole() {
    let rlimits = Rlimits { memory_mb: 128, ..Rlimits::default() };
    let output = sh(SandboxSpec::new("/bin/bash").arg("-c").arg(MEMORY_HOGS).rlimits(rlimits)).await;
    let stdout = text(&output.stdout);
    assert!(stdout.contains("held"), "the processes did allocate: {stdout} {}", text(&output.stderr));
    assert!(figure(&stdout, "rss_mib") <= 128, "{stdout}");
}

#[tokio::test]
async fn the_private_tmp_counts_against_the_commands_memory() {
    let rlimits = Rlimits { memory_mb: 128, ..Rlimits::default() };
    let line = "head -c 200M /dev/zero > /tmp/f; echo status=$?; wc -c < /tmp/f";
    let output = sh(shell(line).rlimits(rlimits)).await;
    let stdout = text(&output.stdout);
    // The memory controller ends the command (or the write) rather than let /tmp hold it.
    assert!(!stdout.contains("209715200"), "{:?} {stdout}", output.status);
    assert!(!stdout.contains("status=0"), "{:?} {stdout}", output.status);
}
