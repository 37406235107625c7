//! A real PostgreSQL server for tests: one per test binary, started on first use, a fresh
//! database per test. Used by the store's unit tests and (through `#[path]`) by the e2e
//! tests, so it needs nothing but std and `tempfile`.
//!
//! The binaries come from `scripts/install-postgres.sh`, which installs them when missing
//! (never a skip). The server lives in a temporary folder, listens on a free loopback port
//! with its socket folder inside the temporary folder too, and asks for [`PASSWORD`] over TCP. It
//! is started by a small shell that waits for this process's end (its stdin closing) and
//! then stops the server and removes the folder, so no server outlives the tests, however
//! they end.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The one server of this test binary.
pub struct TestServer {
    pub port: u16,
    /// Keeps the shell's stdin open while this process runs.
    _keeper: Mutex<Child>,
    bin: PathBuf,
}

/// The user the server runs and is reached as.
pub const USER: &str = "agent_host_test";

/// `USER`'s password: the server asks for it on every TCP connection, so a store that does
/// not pass it on is refused, as by a real deployment.
pub const PASSWORD: &str = "agent-host-test-password";

impl TestServer {
    /// The server, started on first use.
    pub fn shared() -> &'static TestServer {
        static SERVER: OnceLock<TestServer> = OnceLock::new();
        SERVER.get_or_init(start)
    }

    /// A new, empty database on the shared server; its URL, which holds no password
    /// ([`PASSWORD`] is it).
    pub fn fresh_database() -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let server = Self::shared();
        let name = format!("test_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let status = Command::new(server.bin.join("createdb"))
            .env("PGPASSWORD", PASSWORD)
            .args(["-h", "127.0.0.1", "-p", &server.port.to_string(), "-U", USER, &name])
            .status()
            .expect("createdb runs");
        assert!(status.success(), "createdb {name} failed");
        format!("postgres://{USER}@127.0.0.1:{}/{name}", server.port)
    }
}

/// The repository's root: the first folder above the crate's that holds `scripts/`.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("scripts").is_dir())
        .expect("the repository root")
        .to_path_buf()
}

/// The binaries' folder, installed if missing.
fn binaries() -> PathBuf {
    let output = Command::new("bash")
        .arg(repository().join("scripts/install-postgres.sh"))
        .stderr(Stdio::inherit())
        .output()
        .expect("scripts/install-postgres.sh runs");
    assert!(output.status.success(), "scripts/install-postgres.sh failed");
    PathBuf::from(String::from_utf8(output.stdout).expect("a path").trim())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("its address").port()
}

/// PostgreSQL refuses to run as root: as root, the server is run as the `postgres` user the
/// package made.
fn as_server_user(command: &str) -> String {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    if uid.is_ok_and(|uid| uid == "0") {
        format!("runuser -u postgres -- sh -c '{command}'")
    } else {
        command.to_owned()
    }
}

fn start() -> TestServer {
    let bin = binaries();
    let dir = tempfile::Builder::new().prefix("agent-host-pg").tempdir().expect("a temporary folder").keep();
    let port = free_port();
    let data = dir.join("data");
    let socket = dir.join("socket");
    std::fs::create_dir_all(&socket).expect("the socket folder");
    let bin_q = bin.display();
    let (data_q, socket_q, log_q, dir_q) =
        (data.display(), socket.display(), dir.join("server.log").display().to_string(), dir.display());
    let password_file = dir.join("password");
    std::fs::write(&password_file, PASSWORD).expect("the password file");
    let init = format!(
        "{bin_q}/initdb -D {data_q} -U {USER} --pwfile={} --auth-local=trust --auth-host=scram-sha-256 \
         -E UTF8 --no-sync >/dev/null",
        password_file.display()
    );
    let start = format!(
        "{bin_q}/pg_ctl -D {data_q} -l {log_q} -w -o \"-p {port} -k {socket_q} -c listen_addresses=127.0.0.1 -c fsync=off\" start >/dev/null"
    );
    let stop = format!("{bin_q}/pg_ctl -D {data_q} -m immediate stop >/dev/null");
    let script = format!(
        "set -e; chown -R postgres {dir_q} 2>/dev/null || true; {}; {}; echo started; \
         read _ || true; {} || true; rm -rf {dir_q}",
        as_server_user(&init),
        as_server_user(&start),
        as_server_user(&stop)
    );
    let mut keeper = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the server's shell starts");
    let mut line = String::new();
    BufReader::new(keeper.stdout.take().expect("its stdout"))
        .read_line(&mut line)
        .expect("the shell reports");
    if line.trim() != "started" {
        let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
        panic!("the test PostgreSQL did not start:\n{log}");
    }
    // The pipe stays open as long as this process: nothing is written to it.
    let _ = keeper.stdin.as_mut().expect("its stdin").flush();
    TestServer { port, _keeper: Mutex::new(keeper), bin }
}
