//! The shell plugin's commands run in the OS sandbox. Each test runs the real binary
//! (`--prompt … --json`) against the fake model, which scripts `shell` tool calls that try
//! what an attacker would: read the host's environment and files, outlive the call, reach
//! the network, write outside the workspace, exceed the limits.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{
    FakeModel, Reply, TestHost, config_text, contains, files_under, json_prompt_command, plugin_block,
};

/// A fake key in the host's environment; finding it anywhere means a leak.
const KEY: &str = "sk-agent-host-fake-sandbox-51c9e0a7";
/// The variable `config_text` names in `[model].api_key_env`.
const KEY_ENV: &str = "AGENT_HOST_TEST_KEY";

/// A deployment folder: `config.toml`, `sessions.db` and the shell's `workspace/` inside.
struct Deployment {
    dir: tempfile::TempDir,
    model: FakeModel,
}

impl Deployment {
    /// The shell plugin with `grants` added to its `[plugin.grants]` and `extra` after its
    /// block; `runtime` goes under `[runtime]`.
    async fn new(grants: &str, extra: &str, runtime: &str) -> Self {
        let model = FakeModel::start().await;
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("workspace");
        std::fs::create_dir(&workspace).unwrap();
        let block = format!(
            "[plugin.grants]\nprocess = true\n{grants}\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}\n{extra}",
            workspace.display()
        );
        let config = config_text(&model.url(), &plugin_block("shell", &block))
            .replace("[runtime]\n", &format!("[runtime]\n{runtime}\n"));
        // Compiles the component into the shared cache and checks that the config loads.
        TestHost::new(&config).await.expect("the deployment loads");
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        Self { dir, model }
    }

    fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace").canonicalize().unwrap()
    }

    /// One turn in which the model calls `shell` once per argument object, in one reply.
    async fn run(&self, calls: &[Value]) -> Run {
        self.run_wrapped(calls, &[], Stdio::null()).await
    }

    /// As [`Self::run`], with the binary started by `wrapper` (a command line that ends by
    /// running its arguments) and `stdin`.
    async fn run_wrapped(&self, calls: &[Value], wrapper: &[&str], stdin: Stdio) -> Run {
        let mut reply = Reply::text("");
        for args in calls {
            reply = reply.and_tool("shell", &args.to_string());
        }
        self.model.push(reply).push(Reply::text("done"));
        let direct = json_prompt_command(self.dir.path(), None, "run the commands");
        let mut command = match wrapper.split_first() {
            None => direct,
            Some((program, args)) => {
                let direct = direct.as_std();
                let mut command = tokio::process::Command::new(program);
                command.args(args).arg(direct.get_program()).args(direct.get_args());
                for (name, value) in direct.get_envs() {
                    match value {
                        Some(value) => command.env(name, value),
                        None => command.env_remove(name),
                    };
                }
                command.stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
                command
            }
        };
        let started = Instant::now();
        let output = command
            .env_remove("RUST_LOG")
            .env(KEY_ENV, KEY)
            .stdin(stdin)
            .output()
            .await
            .expect("the binary runs");
        let took = started.elapsed();
        assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
        Run { output, took }
    }
}

struct Run {
    output: Output,
    took: Duration,
}

impl Run {
    fn events(&self) -> Vec<Value> {
        String::from_utf8_lossy(&self.output.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
            .collect()
    }

    /// The output of each `shell` result, in call order; each must have succeeded.
    fn results(&self) -> Vec<String> {
        self.events()
            .iter()
            .filter(|e| e["type"] == "tool_result")
            .map(|e| {
                assert_eq!(e["ok"], true, "the tool call failed: {e}");
                e["output"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
}

/// Host processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && contains(&cmdline, marker.as_bytes())
        {
            found.push(String::from_utf8_lossy(&cmdline).replace('\0', " "));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_environment_files_and_processes_are_out_of_reach() {
    let deployment = Deployment::new("", "", "").await;
    let db = deployment.dir.path().join("sessions.db");
    let run = deployment
        .run(&[
            json!({"command": "tr '\\0' '\\n' < /proc/$PPID/environ | grep KEY; echo ppid=$PPID"}),
            json!({"command": "cat /proc/*/environ; env"}),
            json!({"command": "bash -c 'for f in /proc/[0-9]*/environ; do tr \"\\0\" \"\\n\" < $f; done | grep -i key; echo bash-done'"}),
            json!({"command": "cat ../config.toml"}),
            json!({"command": format!("cat {}", db.display())}),
            json!({"command": "echo pids $(ls -d /proc/[0-9]* | wc -l); cat /proc/1/cmdline | tr '\\0' ' '"}),
        ])
        .await;
    let results = run.results();
    assert_eq!(results.len(), 6, "{results:?}");
    // sh is PID 1, so its parent is outside the namespace: PID 0.
    assert!(results[0].contains("ppid=0"), "{}", results[0]);
    assert!(results[2].contains("bash-done"), "{}", results[2]);
    assert!(results[3].contains("No such file"), "{}", results[3]);
    assert!(!results[3].contains("api_key_env"), "{}", results[3]);
    assert!(results[4].contains("No such file"), "{}", results[4]);
    assert!(!results[4].contains("SQLite format"), "{}", results[4]);
    let pids: u32 = results[5]
        .split("pids ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a count: {}", results[5]));
    assert!(pids <= 5, "the sandbox's /proc shows only its own processes: {}", results[5]);
    assert!(results[5].contains("/bin/sh -c"), "{}", results[5]);

    for (stream, bytes) in [("stdout", &run.output.stdout), ("stderr", &run.output.stderr)] {
        assert!(!contains(bytes, KEY.as_bytes()), "the key leaked on {stream}");
    }
    let files = files_under(deployment.dir.path());
    assert!(files.iter().any(|(name, _)| name.ends_with("sessions.db")), "{files:?}");
    for (name, bytes) in &files {
        assert!(!contains(bytes, KEY.as_bytes()), "the key leaked into {}", name.display());
    }
    // Not vacuous: the key was in the host's environment, and the host used it.
    let authorizations = deployment.model.authorizations();
    assert!(authorizations.iter().all(|a| a.as_deref() == Some(&format!("Bearer {KEY}") as &str)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_the_command_started_outlives_it() {
    let deployment = Deployment::new("", "", "").await;
    let marker = format!("escaped-{}", std::process::id());
    let run = deployment
        .run(&[json!({"command": format!("setsid sh -c 'sleep 3; touch {marker}' & sleep 1 & echo forked")})])
        .await;
    assert!(run.results()[0].contains("forked"), "{:?}", run.results());
    assert_eq!(processes_with(&marker), Vec::<String>::new(), "a process of the command survived");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(!deployment.workspace().join(&marker).exists(), "the setsid child ran to the end");
    assert_eq!(processes_with(&marker), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_does_not_hold_the_call() {
    let deployment = Deployment::new("", "", "").await;
    let run = deployment.run(&[json!({"command": "sleep 20 & echo started", "timeout_ms": 1000})]).await;
    let output = &run.results()[0];
    assert!(output.contains("started"), "{output}");
    assert!(output.contains("exit status: 0"), "{output}");
    assert!(run.took < Duration::from_secs(15), "the background sleep held the call: {:?}", run.took);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_past_the_plugins_deadline_is_cut_to_it() {
    let deployment = Deployment::new("", "[plugin.limits]\ntimeout_ms = 1500", "").await;
    let run =
        deployment.run(&[json!({"command": "echo early; sleep 10; echo late", "timeout_ms": 60000})]).await;
    let output = &run.results()[0];
    assert!(output.contains("early"), "{output}");
    assert!(!output.contains("late"), "{output}");
    assert!(output.contains("note: timeout_ms cut to"), "{output}");
    assert!(output.contains("(asked 60000 ms)"), "{output}");
    assert!(output.contains("the plugin call's deadline"), "{output}");
    assert!(output.contains("exit status: none (killed)"), "{output}");
    assert!(!output.contains("timed out after 60000 ms"), "the note names the time it had: {output}");
    assert!(output.contains("timed out after 1"), "{output}");
}

/// A loopback listener the test holds open, and how many connections reached it.
fn listener() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stream.is_ok() {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    });
    (port, accepted)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_network_is_reachable_only_when_granted() {
    let (port, accepted) = listener();
    let command =
        json!({"command": format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo connected")});

    let closed = Deployment::new("", "", "").await.run(std::slice::from_ref(&command)).await;
    assert!(!closed.results()[0].contains("connected\n"), "{}", closed.results()[0]);
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 0, "nothing arrived");

    let open = Deployment::new("network = true", "", "").await.run(&[command]).await;
    assert!(open.results()[0].contains("connected\n"), "{}", open.results()[0]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while accepted.load(std::sync::atomic::Ordering::SeqCst) == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_land_only_in_the_workspace_and_tmp_is_private() {
    let deployment = Deployment::new("", "", "").await;
    let marker = format!("shell-sandbox-tmp-{}", std::process::id());
    let run = deployment
        .run(&[json!({"command": format!(
            "echo kept > kept; touch ../{marker}; touch /etc/{marker}; touch /{marker}; \
             echo private > /tmp/{marker}; cat /tmp/{marker}; \
             echo sandbox > /proc/sys/kernel/domainname || echo sysctl-refused"
        )})])
        .await;
    let output = &run.results()[0];
    assert!(output.contains("private"), "{output}");
    assert!(output.contains("Read-only file system"), "{output}");
    assert!(output.contains("sysctl-refused"), "the host's sysctls are read-only: {output}");
    assert_eq!(std::fs::read_to_string(deployment.workspace().join("kept")).unwrap(), "kept\n");
    assert!(!deployment.dir.path().join(&marker).exists());
    assert!(!Path::new("/etc").join(&marker).exists());
    assert!(!Path::new("/").join(&marker).exists());
    assert!(!Path::new("/tmp").join(&marker).exists(), "the sandbox's /tmp is not the host's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_process_limits_hold() {
    let limits = "[plugin.limits]\nprocess_cpu_secs = 7\nprocess_memory_mb = 512\nprocess_max_procs = 33\nprocess_file_mb = 1";
    let deployment = Deployment::new("", limits, "").await;
    let run = deployment
        .run(&[
            json!({"command": "bash -c 'ulimit -t; ulimit -v; ulimit -u'"}),
            json!({"command": "head -c 2097152 /dev/zero > big; echo status=$?; wc -c < big"}),
        ])
        .await;
    let results = run.results();
    assert!(results[0].contains("stdout:\n7\n524288\n33\n"), "{}", results[0]);
    assert!(!results[1].contains("status=0"), "{}", results[1]);
    assert!(results[1].contains("1048576"), "{}", results[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_none_warns_at_every_start() {
    let deployment = Deployment::new("", "", "sandbox = \"none\"").await;
    let run = deployment.run(&[json!({"command": "echo unconfined"})]).await;
    assert!(run.results()[0].contains("unconfined"));
    assert!(
        run.stderr().contains("[runtime] sandbox = \"none\": processes that plugins start run unconfined"),
        "stderr: {}",
        run.stderr()
    );
    let confined = Deployment::new("", "", "").await.run(&[json!({"command": "true"})]).await;
    assert!(!confined.stderr().contains("unconfined"), "stderr: {}", confined.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_user_namespaces_the_grant_fails_to_load_naming_the_plugin() {
    let deployment = Deployment::new("", "", "").await;
    // A user namespace of the test's own in which no further one may be made: the host's
    // sandbox probe meets the kernel of a machine that has them disabled.
    let output = tokio::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "sh", "-c"])
        .arg("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" --config \"$1\" --check")
        .arg(env!("CARGO_BIN_EXE_agent-host"))
        .arg(deployment.dir.path().join("config.toml"))
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .output()
        .await
        .expect("unshare runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains("plugin shell@0.1.0 is granted `process = true`, but"), "{stderr}");
    assert!(stderr.contains("user namespaces are disabled: unshare(CLONE_NEWUSER"), "{stderr}");
    assert!(stderr.contains("ENOSPC"), "{stderr}");
    assert!(stderr.contains("user.max_user_namespaces"), "{stderr}");
}

/// A pseudo-terminal: the master the test reads, the slave path to hand out.
fn open_pty() -> (std::fs::File, std::fs::File) {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).expect("a pty");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc_o_noctty())
        .open(std::ffi::OsStr::from_bytes(name.as_bytes()))
        .expect("the pty's slave opens");
    (std::fs::File::from(master), slave)
}

fn libc_o_noctty() -> i32 {
    rustix::fs::OFlags::NOCTTY.bits() as i32
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_reach_the_operators_terminal() {
    let deployment = Deployment::new("", "", "").await;
    let (master, slave) = open_pty();
    // Everything written to the terminal, or typed into it, is echoed to the master.
    let received = std::thread::spawn(move || {
        let mut received = Vec::new();
        let _ = std::io::Read::read_to_end(&mut &master, &mut received);
        received
    });
    let sti = "import fcntl, os, termios\n\
               for fd in sorted(int(f) for f in os.listdir('/proc/self/fd')):\n    \
                   try:\n        fcntl.ioctl(fd, termios.TIOCSTI, b'#'); print('sti-typed', fd)\n    \
                   except OSError as e: print('sti-refused', fd, e.errno)\n";
    // The host runs as a terminal's session leader would have it: the pty its controlling
    // terminal and stdin, and one more descriptor of it inherited without close-on-exec.
    let wrapper = ["setsid", "--ctty", "--wait", "sh", "-c", "exec 9<&0 && exec \"$0\" \"$@\""];
    let run = deployment
        .run_wrapped(
            &[
                json!({"command": "printf '\\033]0;osc-from-sandbox\\007' > /dev/tty && echo tty-written; \
                                   echo fds; ls /proc/1/fd; echo tty_nr=$(cut -d' ' -f7 /proc/$$/stat)"}),
                json!({"command": format!("python3 -c \"{sti}\"")}),
            ],
            &wrapper,
            Stdio::from(slave),
        )
        .await;
    let results = run.results();
    let received = received.join().unwrap();
    assert!(!results[0].contains("tty-written"), "{}", results[0]);
    assert!(
        results[0].contains("fds\n0\n1\n2\ntty_nr"),
        "only stdin, stdout and stderr are open: {}",
        results[0]
    );
    assert!(results[0].contains("tty_nr=0\n"), "no controlling terminal: {}", results[0]);
    assert!(!results[1].contains("sti-typed"), "{}", results[1]);
    assert!(results[1].contains("sti-refused 0"), "{}", results[1]);
    assert_eq!(String::from_utf8_lossy(&received), "", "nothing reached the terminal");
}

/// The description of the key the host's session holds.
const SESSION_KEY: &str = "agent-host-test-session-key";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_session_keyring_is_out_of_reach() {
    let deployment = Deployment::new("", "", "").await;
    // The host starts in a session keyring of its own that holds a key, as a login's does.
    let hold_a_key = format!(
        "require 'syscall.ph'; my ($name, $type, $desc, $data) = ('agent-host-test', 'user', '{SESSION_KEY}', 'key-data-9f1c'); \
         syscall(&SYS_keyctl, 1, $name) > 0 or die \"join: $!\"; \
         syscall(&SYS_add_key, $type, $desc, $data, length($data), -3) > 0 or die \"add_key: $!\"; \
         exec @ARGV or die \"exec: $!\""
    );
    let read_the_key = format!(
        "perl -e 'require \"syscall.ph\"; my ($t, $d) = (\"user\", \"{SESSION_KEY}\"); \
         my $id = syscall(&SYS_keyctl, 10, -3, $t, $d, 0); \
         if ($id < 0) {{ print \"search-errno=\", $! + 0, \"\\n\"; exit }} \
         my $b = \"\\0\" x 64; my $n = syscall(&SYS_keyctl, 11, $id, $b, 64); print \"read=\", substr($b, 0, $n), \"\\n\"'; \
         cat /proc/keys; cat /proc/keys | while read id rest; do perl -e 'require \"syscall.ph\"; my $b = \"\\0\" x 64; \
         my $n = syscall(&SYS_keyctl, 11, hex($ARGV[0]), $b, 64); print substr($b, 0, $n) if $n > 0' $id; done"
    );
    let run = deployment
        .run_wrapped(&[json!({"command": read_the_key})], &["perl", "-e", &hold_a_key], Stdio::null())
        .await;
    let output = &run.results()[0];
    assert!(!output.contains("key-data-9f1c"), "{output}");
    assert!(output.contains("search-errno=1\n"), "keyctl is refused with EPERM: {output}");
    // Not even its description is listed: /proc/keys is covered.
    assert!(!output.contains(SESSION_KEY), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn process_memory_mb_bounds_a_command_as_a_whole() {
    let limits = "[plugin.limits]\nprocess_memory_mb = 128\ntimeout_ms = 30000";
    let deployment = Deployment::new("", limits, "").await;
    // Eight background processes that each hold 64 MiB, then what they hold together.
    let hogs = "for i in 1 2 3 4 5 6 7 8; do \
          python3 -c 'import time; b = b\"x\" * (64 << 20); print(\"held\", flush=True); time.sleep(4)' & done; \
        sleep 2; cat /proc/[0-9]*/status | awk '/VmRSS/ { kb += $2 } END { print \"rss_mib=\" int(kb / 1024) }'; \
        kill $(jobs -p) 2>/dev/null; wait";
    let run = deployment.run(&[json!({"command": hogs, "timeout_ms": 20000})]).await;
    let output = &run.results()[0];
    assert!(output.contains("held"), "the processes did allocate: {output}");
    let rss: u64 = output
        .split("rss_mib=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a figure: {output}"));
    assert!(rss <= 128, "{rss} MiB held under a limit of 128 MiB: {output}");
}
