//! A real OCI registry for the tests: Debian's `docker-registry` (CNCF distribution),
//! installed by `scripts/install-registry.sh` when missing, on a free loopback port with its
//! own storage folder and its access log in a file, so a test can alter a stored blob or
//! assert that no blob was asked for. Stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::repo_root;

/// One running registry.
pub struct Registry {
    child: Option<Child>,
    /// Its `HOST:PORT`, as references name it.
    pub address: String,
    /// Its storage, its config and its log.
    pub dir: tempfile::TempDir,
}

impl Registry {
    /// A registry on a free port of 127.0.0.1, ready to answer.
    pub fn start() -> Self {
        Self::start_on(std::net::Ipv4Addr::LOCALHOST.into(), None)
    }

    /// A registry on a free port of `ip`, speaking TLS with `tls` (its certificate and key,
    /// PEM files) when given, plain HTTP otherwise.
    pub fn start_on(ip: std::net::IpAddr, tls: Option<(&Path, &Path)>) -> Self {
        let binary = binary();
        let dir = tempfile::tempdir().expect("a temporary folder");
        let port = std::net::TcpListener::bind((ip, 0))
            .expect("a free port")
            .local_addr()
            .expect("an address")
            .port();
        let address = std::net::SocketAddr::new(ip, port).to_string();
        let tls = tls.map_or_else(String::new, |(certificate, key)| {
            format!("\n  tls:\n    certificate: {}\n    key: {}", certificate.display(), key.display())
        });
        let config = format!(
            "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\nstorage:\n  filesystem:\n    \
             rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {address}{tls}\n",
            dir.path().join("storage").display()
        );
        std::fs::write(dir.path().join("config.yml"), config).expect("write the registry's config");
        let mut registry = Self { child: None, address, dir };
        registry.run(&binary);
        registry
    }

    fn run(&mut self, binary: &Path) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("the registry's log file");
        let child = Command::new(binary)
            .arg("serve")
            .arg(self.dir.path().join("config.yml"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log again"))
            .stderr(log)
            .spawn()
            .expect("the registry starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(&self.address).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the registry did not listen on {} within 20 s: {}", self.address, self.log());
    }

    /// Stops it; its storage stays, for `restart`.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The access log (and every other line it wrote) so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Forgets what the log holds so far.
    pub fn clear_log(&self) {
        std::fs::write(self.log_path(), "").expect("truncate the registry's log");
    }

    /// The requests for blobs in the log: `GET /v2/.../blobs/sha256:...`.
    pub fn blob_requests(&self) -> Vec<String> {
        self.log()
            .lines()
            .filter(|line| line.contains("\"GET /v2/") && line.contains("/blobs/"))
            .map(str::to_owned)
            .collect()
    }

    /// Where the registry keeps the blob `digest` (`sha256:HEX`).
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
        self.dir.path().join("storage/docker/registry/v2/blobs/sha256").join(&hex[..2]).join(hex).join("data")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("registry.log")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The registry's binary: installed by the repository's script when missing (a test never
/// skips for want of it).
fn binary() -> PathBuf {
    let installed = Path::new("/usr/bin/docker-registry");
    if installed.is_file() {
        return installed.to_path_buf();
    }
    let output = Command::new(repo_root().join("scripts/install-registry.sh"))
        .stderr(Stdio::inherit())
        .output()
        .expect("scripts/install-registry.sh runs");
    assert!(output.status.success(), "scripts/install-registry.sh failed");
    PathBuf::from(String::from_utf8(output.stdout).expect("a path").trim())
}

/// An address of this machine that is not a loopback one, as another machine would reach it:
/// the one its routes would send from.
pub fn machine_address() -> std::net::IpAddr {
    // A UDP "connection" sends nothing; it only asks the kernel which address it would use.
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").expect("a UDP socket");
    for far in ["192.0.2.1:9", "10.255.255.254:9", "172.31.255.254:9"] {
        if socket.connect(far).is_ok()
            && let Ok(local) = socket.local_addr()
            && !local.ip().is_loopback()
            && !local.ip().is_unspecified()
        {
            return local.ip();
        }
    }
    panic!("this machine has no address but loopback: the remote-registry tests need a network interface")
}
