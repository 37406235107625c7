//! Idle means idle: a host rebuilds and reloads once per change a person made, never because
//! it, its builds or anyone else read a file, nor because a build wrote its outputs; and a
//! change it rejects is reported once, until the file changes again. Through the real binary
//! (`serve -v`) on the shipped `config.toml` with its builtins swapped for their crate
//! folders, as a developer working on them runs it: builds are counted from its log, its CPU
//! time read from `/proc`. As shipped (builtins), a host builds nothing at all.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt as _, BufReader};

use crate::source_plugin::author_crate;
use crate::support::{FakeModel, config_text, repo_root, shared_cache_dir};

/// How long a test leaves the host alone: over thirty debounce windows of the watcher.
pub(crate) const IDLE: Duration = Duration::from_secs(10);
/// What a cargo build of a crate folder logs with `-v`, once per build.
const BUILDING: &str = "building plugin for wasm32-wasip2";
/// What the host logs when a reload is refused.
const REJECTED: &str = "reload rejected";

/// The repository's `config.toml` in a folder of its own, as a developer working on the stock
/// plugins runs it: each `builtin = "NAME"` made `path = "<checkout>/plugins/NAME"` (the
/// repository's crate folders) and the compile cache shared with the other tests; the offline
/// demo's script beside it, since the shipped config names no endpoint.
pub(crate) fn shipped_deployment() -> tempfile::TempDir {
    let root = repo_root();
    let shipped = std::fs::read_to_string(root.join("config.toml")).unwrap();
    let text = shipped.replace("builtin = \"", &format!("path = \"{}/plugins/", root.display())).replace(
        "cache_dir = \".agent-host/cache\"",
        &format!("cache_dir = \"{}\"", shared_cache_dir().display()),
    );
    assert!(text.contains(&format!("{}/plugins/todo\"", root.display())), "the paths were rewritten");
    assert!(text.contains(&shared_cache_dir().display().to_string()), "the cache was moved");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    std::fs::create_dir(dir.path().join("demo")).unwrap();
    std::fs::copy(root.join("demo/script.toml"), dir.path().join("demo/script.toml")).unwrap();
    dir
}

/// `agent-host serve -v` on a deployment, its log (stderr) collected line by line.
struct Served {
    child: tokio::process::Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Served {
    /// Started, with its plugins loaded: `serve` prints where it listens once they are.
    async fn start(config: &Path) -> Self {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
            .args(["serve", "-v", "--listen", "127.0.0.1:0", "--config"])
            .arg(config)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env("NO_COLOR", "1")
            .env("AGENT_HOST_TEST_KEY", "k")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let lines = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                lines.lock().unwrap().push(line);
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        // A cold build of the plugins' SDK on a busy machine takes minutes; this only guards
        // against a hang.
        let listening = tokio::time::timeout(Duration::from_secs(900), stdout.next_line()).await;
        let listening = listening.expect("serve starts").unwrap();
        assert!(
            listening.as_deref().is_some_and(|line| line.contains("listening on")),
            "{listening:?}: {}",
            log.lock().unwrap().join("\n")
        );
        // The rest of stdout (a sign-in link) is read and dropped, so the pipe never fills.
        tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
        Self { child, log }
    }

    /// How many lines of the log so far contain `text`.
    fn count(&self, text: &str) -> usize {
        self.log.lock().unwrap().iter().filter(|line| line.contains(text)).count()
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// The CPU time the process has spent so far, its own and its finished children's (the
    /// builds it ran), in seconds.
    fn cpu_seconds(&self) -> f64 {
        let pid = self.child.id().expect("the server runs");
        cpu_seconds(pid)
    }

    /// Waits until the log holds `times` lines containing `text`. The deadline only guards
    /// against a hang.
    async fn wait_for(&self, text: &str, times: usize) {
        let deadline = Instant::now() + Duration::from_secs(300);
        while self.count(text) < times {
            assert!(Instant::now() < deadline, "the log never had {times} × `{text}`:\n{}", self.log());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// utime + stime + cutime + cstime of `pid`, from `/proc/PID/stat`, in seconds.
#[allow(unsafe_code)]
pub(crate) fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The command name (in parentheses) may hold spaces; the fields after it do not. After
    // it come state (field 3) ... utime (14), stime (15), cutime (16), cstime (17).
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..].split_whitespace().collect();
    let ticks: u64 = fields[11..15].iter().map(|field| field.parse::<u64>().unwrap()).sum();
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / per_second as f64
}

/// The shipped deployment, served and left alone, builds nothing and spends next to no CPU.
///
/// The CPU bound is a check that no loop runs, not a speed benchmark: an idle host wakes a few
/// times a second (the watcher's and the debouncer's ticks, a lease's renewal) and spends a few
/// hundredths of a second in ten; a host that reloads on its own reads, compiles nothing but
/// runs cargo three times a cycle, and spends seconds. One second is far from both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_server_on_the_shipped_config_builds_nothing_and_spends_next_to_no_cpu() {
    let deployment = shipped_deployment();
    let served = Served::start(&deployment.path().join("config.toml")).await;
    let (builds, cpu) = (served.count(BUILDING), served.cpu_seconds());
    assert!(builds >= 3, "the start-up load built the three crate folders:\n{}", served.log());

    tokio::time::sleep(IDLE).await;
    let rebuilt = served.count(BUILDING) - builds;
    let spent = served.cpu_seconds() - cpu;
    assert_eq!(rebuilt, 0, "nobody changed a file, yet it built {rebuilt} times:\n{}", served.log());
    assert!(spent < 1.0, "idle for {IDLE:?}, it spent {spent:.2} CPU-seconds");
}

/// The shipped config as `init` writes it, whose plugins are builtins: served, it builds
/// nothing, at start or idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_config_with_builtins_builds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = std::fs::read_to_string(repo_root().join("config.toml")).unwrap();
    let text = shipped.replace(
        "cache_dir = \".agent-host/cache\"",
        &format!("cache_dir = \"{}\"", shared_cache_dir().display()),
    );
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    let served = Served::start(&dir.path().join("config.toml")).await;
    assert_eq!(served.count("plugin loaded"), 3, "{}", served.log());
    tokio::time::sleep(IDLE / 2).await;
    assert_eq!(served.count(BUILDING), 0, "a builtin is never built:\n{}", served.log());
}

/// A typo saved in config.toml is reported once and stays reported once while nothing else
/// changes; the fix saved reloads once (one build of each crate folder) and nothing follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_config_edit_is_reported_once_and_its_fix_reloads_once() {
    let deployment = shipped_deployment();
    let config = deployment.path().join("config.toml");
    let served = Served::start(&config).await;
    let builds = served.count(BUILDING);
    let good = std::fs::read_to_string(&config).unwrap();

    std::fs::write(&config, good.replacen("max_iterations = 10", "max_iterations = 10 10", 1)).unwrap();
    served.wait_for(REJECTED, 1).await;
    tokio::time::sleep(IDLE / 2).await;
    assert_eq!(served.count(REJECTED), 1, "the typo was reported more than once:\n{}", served.log());
    assert_eq!(served.count(BUILDING), builds, "a config that does not parse builds nothing");

    std::fs::write(&config, &good).unwrap();
    served.wait_for(BUILDING, builds + 3).await;
    tokio::time::sleep(IDLE / 2).await;
    assert_eq!(served.count(BUILDING), builds + 3, "the fix reloaded more than once:\n{}", served.log());
    assert_eq!(served.count(REJECTED), 1, "{}", served.log());
}

/// A plugin's crate folder read through, and files written in its build folders, as a build
/// does: no reload. An edit to its source: one build, whose own reads and writes start none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_build_outputs_start_no_reload_and_an_edit_starts_one() {
    let model = FakeModel::start().await;
    let source = author_crate("triage-modes-idle");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let block = format!("[[plugin]]\npath = \"{}\"\n", source.path().display());
    std::fs::write(&config, config_text(&model.url(), &block)).unwrap();
    let served = Served::start(&config).await;
    assert_eq!(served.count(BUILDING), 1, "{}", served.log());

    // What a build, an editor's scan or a search does: read every file there is.
    for file in files_in(source.path()).into_iter().chain([config.clone()]) {
        std::fs::read(&file).unwrap();
    }
    // What builds write: outputs under the folder's target/ and build/, and a stamp.
    for output in ["target/release/out.wasm", "build/staging/out.wasm", "build/out.source-digest"] {
        let path = source.path().join(output);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"built").unwrap();
    }
    tokio::time::sleep(IDLE / 2).await;
    assert_eq!(served.count(BUILDING), 1, "reads and build outputs started a build:\n{}", served.log());

    let lib = source.path().join("src/stages.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, text.replacen("You are triaging.", "You are triaging, edited.", 1)).unwrap();
    served.wait_for(BUILDING, 2).await;
    served.wait_for("plugin loaded", 2).await;
    tokio::time::sleep(IDLE / 2).await;
    assert_eq!(served.count(BUILDING), 2, "the edit's build started another:\n{}", served.log());
}

/// Every file under `dir`.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_in(&path));
        } else {
            found.push(path);
        }
    }
    found
}
