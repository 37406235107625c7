//! One writer per session: a process holds a lease on each session it has open, in the
//! store, and another process that wants the session is refused while the lease is live.
//!
//! A lease names its holder (process id, host name, PID namespace, and a random token that
//! tells two holders with the same pid apart) and an expiry. The holder's keeper thread
//! renews all of its leases every third of the lease's length; closing the session releases
//! it. A holder that crashed stops renewing, and its leases run out. On the same machine (the
//! same host name, PID namespace and boot id) a dead holder is seen at once — its process is gone —
//! and its lease is taken over without waiting.
//!
//! Every taking of a session's lease gets the next generation, and a step is written only
//! under the generation its writer took (the fence): a holder that was paused or cut off
//! while another took the session writes nothing when it wakes, even if the other has let
//! the session go since.
//!
//! A lease also says what kind of process holds it ([`HolderRole`]), so that a refusal tells
//! the person refused what to do: a `--prompt` run ends by itself, a console sitting idle at
//! its prompt keeps the session until it is left, and waiting for it helps nobody.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::store::{SessionStore, StoreError};
use crate::unpoisoned::LockUnpoisoned as _;

/// Who holds leases: one per [`super::Sessions`], so one per process in practice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Random; what the store compares.
    pub token: String,
    pub pid: u32,
    pub host: String,
    /// Where `pid` means something: `/proc/self/ns/pid`'s target and the kernel's boot id,
    /// e.g. `pid:[4026531836]@5f8a…`; empty when unknown. The namespace alone is the same on
    /// every machine's initial namespace; the boot id is random per boot. (Holders written
    /// before the boot id was added have the namespace alone: they match no holder now, so
    /// only their expiry frees their sessions.)
    pub pid_namespace: String,
    /// What the process is, as it said when it started ([`this_process_is`]).
    pub role: HolderRole,
}

/// What kind of process holds a lease: how long it keeps a session, and so what someone it
/// keeps out should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HolderRole {
    /// A console: it keeps its session for as long as it stays open, idle or not.
    Console,
    /// One turn (`--prompt`): it lets go when the turn ends.
    OneTurn,
    /// `agent-host serve`: it lets go of a session nobody has used for a while.
    Serve,
    /// `agent-host acp`: it keeps a session while the editor has it open.
    Acp,
    /// Not said: an embedder, a test, or a holder an older version recorded.
    #[default]
    Unknown,
}

impl HolderRole {
    /// As the store keeps it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Console => "console",
            Self::OneTurn => "prompt",
            Self::Serve => "serve",
            Self::Acp => "acp",
            Self::Unknown => "",
        }
    }

    /// As the store kept it; anything unknown (an older or newer version's) is `Unknown`.
    pub fn from_stored(text: &str) -> Self {
        [Self::Console, Self::OneTurn, Self::Serve, Self::Acp]
            .into_iter()
            .find(|role| role.as_str() == text)
            .unwrap_or(Self::Unknown)
    }
}

/// What this process is, set once by its front end before it takes any lease.
static THIS_PROCESS_ROLE: OnceLock<HolderRole> = OnceLock::new();

/// Says what this process is, for the leases it takes from now on: a property of the process,
/// as its pid is. The first call decides.
pub fn this_process_is(role: HolderRole) {
    let _ = THIS_PROCESS_ROLE.set(role);
}

impl Holder {
    /// This process, with a fresh token.
    pub fn this_process() -> Self {
        Self {
            token: uuid::Uuid::new_v4().simple().to_string(),
            pid: std::process::id(),
            host: host_name(),
            pid_namespace: pid_namespace(),
            role: THIS_PROCESS_ROLE.get().copied().unwrap_or_default(),
        }
    }

    /// Whether `observer` can look into `self`'s process: the same machine, the same PID
    /// namespace. A holder it cannot see (another machine, another container) is known only
    /// by its lease.
    pub fn seen_from(&self, observer: &Holder) -> bool {
        self.host == observer.host
            && !self.pid_namespace.is_empty()
            && self.pid_namespace == observer.pid_namespace
    }

    /// Whether `self`, as seen from `observer`, is a process known to have ended: it ran on the
    /// same machine, in the same PID namespace, and its process is gone (or a zombie). A
    /// holder this process cannot see is never gone: only its lease's expiry frees the session.
    pub fn is_gone(&self, observer: &Holder) -> bool {
        if !self.seen_from(observer) {
            return false;
        }
        match std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) {
            // `pid (comm) S ...`: the state follows the last `)`, since comm may hold one.
            Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
            Err(error) => error.kind() == std::io::ErrorKind::NotFound,
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "process {} on {}", self.pid, self.host)
    }
}

/// This process's PID namespace and the boot it runs in (see [`Holder::pid_namespace`]);
/// empty when either is unknown, which makes no holder of it ever seen gone.
fn pid_namespace() -> String {
    let namespace = std::fs::read_link("/proc/self/ns/pid").map(|target| target.display().to_string());
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|id| id.trim().to_owned());
    match (namespace, boot) {
        (Ok(namespace), Ok(boot)) if !boot.is_empty() => format!("{namespace}@{boot}"),
        _ => String::new(),
    }
}

/// The machine's name, for people reading a lease error.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "an unnamed host".to_owned())
}

/// Milliseconds since the Unix epoch, the unit of a lease's expiry.
pub fn now_millis() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// `millis` as a UTC time of day, `21:50:31 UTC`: a lease is never long enough for the date
/// to matter.
pub fn time_of_day(millis: i64) -> String {
    let seconds = millis.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02} UTC", seconds / 3600, seconds / 60 % 60, seconds % 60)
}

/// This process's leases: who it is, how long a lease lasts, and the thread that renews them.
pub struct Leases {
    shared: Arc<Shared>,
    keeper: Option<JoinHandle<()>>,
}

struct Shared {
    store: Arc<dyn SessionStore>,
    holder: Holder,
    length: Duration,
    /// Leases held now; the keeper renews only while there are some.
    held: AtomicUsize,
    /// Leases taken from another holder whose lease had run out or who had ended.
    takeovers: AtomicU64,
    stop: Mutex<bool>,
    wake: Condvar,
}

impl Leases {
    /// Leases of `length` in `store` for a new holder (this process), renewed by a thread.
    pub fn start(store: Arc<dyn SessionStore>, length: Duration) -> Self {
        let shared = Arc::new(Shared {
            store,
            holder: Holder::this_process(),
            length,
            held: AtomicUsize::new(0),
            takeovers: AtomicU64::new(0),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let state = shared.clone();
        let keeper = std::thread::Builder::new()
            .name("session-leases".into())
            .spawn(move || keep(&state))
            .expect("the lease keeper thread must start");
        Self { shared, keeper: Some(keeper) }
    }

    pub fn holder(&self) -> &Holder {
        &self.shared.holder
    }

    /// How many leases this holder took from another that had run out or ended.
    pub fn takeovers(&self) -> u64 {
        self.shared.takeovers.load(Ordering::Relaxed)
    }

    /// When a lease taken now runs out.
    pub fn expiry(&self) -> i64 {
        self.shared.expiry()
    }

    /// Takes the lease on session `id`, or says who holds it. A holder known to be gone is
    /// replaced at once.
    pub fn acquire(&self, id: &str) -> Result<LeaseGuard, StoreError> {
        let shared = &self.shared;
        let claim = new_claim();
        let mut replacing = None;
        loop {
            let other = match shared.store.lease(
                id,
                &shared.holder,
                &claim,
                shared.expiry(),
                replacing.as_deref(),
            )? {
                LeaseAnswer::Taken(taken) => {
                    if taken.took_over {
                        shared.takeovers.fetch_add(1, Ordering::Relaxed);
                        tracing::info!(session = id, generation = taken.generation, "took the session over");
                    }
                    return Ok(self.guard(id, claim, taken.generation));
                }
                LeaseAnswer::HeldBy(other) => other,
            };
            if replacing.is_none() && other.holder.is_gone(&shared.holder) {
                tracing::info!(session = id, "taking over the lease of {}, which has ended", other.holder);
                replacing = Some(other.holder.token);
                continue;
            }
            return Err(StoreError::Leased {
                session: id.to_owned(),
                seen: other.holder.seen_from(&shared.holder),
                holder: Box::new(other.holder),
                expires_at: other.expires_at,
            });
        }
    }

    /// Records a new session `id` in the store, leased to this holder.
    pub fn create(&self, id: &str) -> Result<LeaseGuard, StoreError> {
        let claim = new_claim();
        let taken = self.shared.store.create(id, &self.shared.holder, &claim, self.shared.expiry())?;
        Ok(self.guard(id, claim, taken.generation))
    }

    /// Records a new session `id` holding a copy of `contents`, leased to this holder.
    pub fn create_copy(&self, id: &str, contents: &super::StoredSession) -> Result<LeaseGuard, StoreError> {
        let claim = new_claim();
        let taken = self.shared.store.create_copy(
            id,
            &self.shared.holder,
            &claim,
            self.shared.expiry(),
            contents,
            None,
        )?;
        Ok(self.guard(id, claim, taken.generation))
    }

    fn guard(&self, id: &str, claim: String, generation: u64) -> LeaseGuard {
        self.shared.held.fetch_add(1, Ordering::Relaxed);
        LeaseGuard { shared: self.shared.clone(), session: id.to_owned(), claim, generation }
    }
}

/// Names one taking of a lease, so that closing a session releases only its own: a session
/// reopened while its old copy is still being dropped keeps the new lease.
fn new_claim() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl Shared {
    fn expiry(&self) -> i64 {
        now_millis().saturating_add(self.length.as_millis() as i64)
    }
}

impl Drop for Leases {
    fn drop(&mut self) {
        *self.shared.stop.lock_unpoisoned() = true;
        self.shared.wake.notify_all();
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
    }
}

/// Renews every lease of the holder each third of a lease's length until told to stop.
fn keep(shared: &Shared) {
    let interval = shared.length / 3;
    let mut stop = shared.stop.lock_unpoisoned();
    loop {
        let (guard, _) = shared
            .wake
            .wait_timeout_while(stop, interval, |stopped| !*stopped)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        stop = guard;
        if *stop {
            return;
        }
        if shared.held.load(Ordering::Relaxed) == 0 {
            continue;
        }
        drop(stop);
        if let Err(error) = shared.store.renew_leases(&shared.holder.token, shared.expiry()) {
            // The next round tries again; a lease that runs out meanwhile shows up as an
            // error at the session's next commit, not as two writers.
            tracing::warn!("cannot renew the session leases: {error}");
        }
        stop = shared.stop.lock_unpoisoned();
    }
}

/// A lease this process holds; released when dropped (the session is closed).
pub struct LeaseGuard {
    shared: Arc<Shared>,
    session: String,
    claim: String,
    generation: u64,
}

impl LeaseGuard {
    /// What the store checks at every commit: this holder, under this taking's generation.
    pub fn fence(&self) -> Fence<'_> {
        Fence { token: &self.shared.holder.token, generation: self.generation }
    }
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        self.shared.held.fetch_sub(1, Ordering::Relaxed);
        if let Err(error) = self.shared.store.release_lease(&self.session, &self.claim) {
            tracing::warn!(session = self.session, "cannot release the session's lease: {error}");
        }
    }
}

/// Another holder's lease, as the store has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldLease {
    pub holder: Holder,
    pub expires_at: i64,
}

/// The refusal of a step whose writer's lease is not the session's any more; `now` is the
/// session's lease as the store has it.
pub fn lost(session: &str, now: Option<HeldLease>) -> StoreError {
    let holder = match now {
        Some(lease) if lease.expires_at != 0 => lease.holder.to_string(),
        _ => "another process, which has let it go since".to_owned(),
    };
    StoreError::LeaseLost { session: session.to_owned(), holder }
}

/// Why session `session` cannot be opened here: `holder` has it, its claim running out at
/// `expires_at` unless renewed; `seen`: this process can look into the holder's (so had it
/// crashed, its claim would have been taken over at once). Each kind of holder keeps a session
/// differently, and the person refused is told what will free it — or, where nothing will
/// soon, how to go on from a copy.
pub fn refusal(session: &str, holder: &Holder, expires_at: i64, seen: bool) -> String {
    let who = format!("process {} on {}", holder.pid, holder.host);
    let fork = format!("go on from a copy of it with `--fork {session}`");
    let mut text = match holder.role {
        HolderRole::Console => format!(
            "session {session} is open in another console ({who}), which keeps it for as long as it \
             stays open: one process at a time may run a session. Leave that console (Ctrl-D) and \
             resume it here, or {fork}"
        ),
        HolderRole::OneTurn => format!(
            "session {session} is running a turn in {who} (`--prompt`): one process at a time may run a \
             session. Wait for the turn to end, or {fork}"
        ),
        HolderRole::Serve => format!(
            "session {session} is open in `agent-host serve` ({who}), which lets it go once nobody \
             has used it for five minutes: one process at a time may run a session. Use it through \
             that server, or {fork}"
        ),
        HolderRole::Acp => format!(
            "session {session} is open in an editor, through `agent-host acp` ({who}), which keeps it \
             while the editor does: one process at a time may run a session. Close it there, or {fork}"
        ),
        HolderRole::Unknown => format!(
            "session {session} is in use by {who}: one process at a time may run a session. Wait for \
             it to finish with it, or {fork}"
        ),
    };
    if !seen {
        // A crashed holder elsewhere is known only by its claim, which is no longer renewed.
        text.push_str(&format!(
            ". If that process has crashed, its claim runs out at {} ([storage] lease_secs)",
            time_of_day(expires_at)
        ));
    }
    text
}

/// A taking of a lease, as the store numbered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taken {
    /// One more than the session's last taking: the first is 1.
    pub generation: u64,
    /// The lease was another holder's, not let go: it had run out, or its holder had ended.
    pub took_over: bool,
}

/// What the store answers a request for a lease.
#[derive(Debug, Clone)]
pub enum LeaseAnswer {
    Taken(Taken),
    /// Another holder's lease is live; nothing changed.
    HeldBy(HeldLease),
}

/// What a step carries so the store can tell its writer still holds the lease it took: the
/// lease row must name this holder under this generation, and not have been let go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fence<'a> {
    pub token: &'a str,
    pub generation: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_in_this_process_is_alive_and_one_whose_process_ended_is_gone() {
        let me = Holder::this_process();
        let mut sibling = Holder::this_process();
        assert!(!sibling.is_gone(&me), "this process runs");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        sibling.pid = child.id();
        child.wait().unwrap();
        assert!(sibling.is_gone(&me), "a reaped child is gone");
        sibling.host = format!("{}-elsewhere", me.host);
        assert!(!sibling.is_gone(&me), "a holder on another machine cannot be seen, so it is not gone");
    }

    #[test]
    fn another_machines_holder_with_the_same_host_name_and_namespace_is_not_taken_for_gone() {
        let me = Holder::this_process();
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
        assert!(me.pid_namespace.contains(boot.trim()), "the boot names the machine: {me:?}");
        // Every machine's initial namespace has the same number, and hosts are often named
        // alike: only the boot id tells this holder from one on another machine.
        let namespace = std::fs::read_link("/proc/self/ns/pid").unwrap().display().to_string();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let elsewhere = Holder {
            token: "t".into(),
            pid: child.id(),
            host: me.host.clone(),
            pid_namespace: format!("{namespace}@00000000-0000-0000-0000-000000000000"),
            role: HolderRole::Unknown,
        };
        child.wait().unwrap();
        assert!(!elsewhere.is_gone(&me), "its pid means nothing here");
        let older = Holder { pid_namespace: namespace, ..elsewhere };
        assert!(!older.is_gone(&me), "a holder written before boot ids were recorded cannot be placed");
    }

    #[test]
    fn a_refusal_says_what_frees_the_session_by_who_holds_it() {
        let holder = |role| Holder { role, pid: 42, host: "box".into(), ..Holder::this_process() };
        let console = refusal("s1", &holder(HolderRole::Console), 0, true);
        assert!(
            console.starts_with("session s1 is open in another console (process 42 on box)"),
            "{console}"
        );
        assert!(console.ends_with("go on from a copy of it with `--fork s1`"), "{console}");
        assert!(!console.contains("Wait") && !console.contains("runs out"), "nothing to wait for: {console}");
        let turn = refusal("s1", &holder(HolderRole::OneTurn), 0, true);
        assert!(turn.contains("is running a turn in process 42 on box") && turn.contains("Wait"), "{turn}");
        for role in [HolderRole::Serve, HolderRole::Acp, HolderRole::Unknown] {
            let text = refusal("s1", &holder(role), 0, true);
            assert!(text.contains("process 42 on box") && text.contains("--fork s1"), "{text}");
        }
        let elsewhere = refusal("s1", &holder(HolderRole::Console), 3_600_000, false);
        assert!(
            elsewhere.ends_with("its claim runs out at 01:00:00 UTC ([storage] lease_secs)"),
            "{elsewhere}"
        );
    }

    #[test]
    fn a_role_is_stored_as_text_and_an_unknown_one_read_as_unknown() {
        for role in [
            HolderRole::Console,
            HolderRole::OneTurn,
            HolderRole::Serve,
            HolderRole::Acp,
            HolderRole::Unknown,
        ] {
            assert_eq!(HolderRole::from_stored(role.as_str()), role);
        }
        assert_eq!(HolderRole::from_stored("a later kind"), HolderRole::Unknown);
    }

    #[test]
    fn times_of_day_are_utc() {
        assert_eq!(time_of_day(0), "00:00:00 UTC");
        assert_eq!(time_of_day(((21 * 60 + 50) * 60 + 31) * 1000 + 999 + 86_400_000 * 3), "21:50:31 UTC");
    }
}
