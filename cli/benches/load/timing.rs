//! What one session cost the host: the time between model calls, measured from the
//! events the agent loop emits, and the process's resident memory.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use agent_host::{Event, EventSink};

/// Records when each model call started and ended.
#[derive(Default)]
pub struct TimingSink {
    marks: Mutex<Vec<(Mark, Instant)>>,
}

#[derive(Clone, Copy, PartialEq)]
enum Mark {
    RequestSent,
    ReplyRead,
    ToolStarted,
    ToolAnswered,
}

/// Where the host's time between model calls went, summed over sessions.
#[derive(Default, Clone, Copy)]
pub struct Breakdown {
    /// From a reply to its first tool starting: storing the reply, validation, pre-tool hooks.
    pub reply_to_tool: Duration,
    /// The tools themselves and their post-tool hooks.
    pub in_tools: Duration,
    /// From the last result to the next request: storing results, every plugin's `provide`.
    pub tool_to_request: Duration,
}

impl std::ops::AddAssign for Breakdown {
    fn add_assign(&mut self, other: Self) {
        self.reply_to_tool += other.reply_to_tool;
        self.in_tools += other.in_tools;
        self.tool_to_request += other.tool_to_request;
    }
}

impl EventSink for TimingSink {
    fn emit(&self, event: &Event) {
        let mark = match event {
            Event::ModelRequest { .. } => Mark::RequestSent,
            Event::AssistantMessage { .. } => Mark::ReplyRead,
            Event::ToolCall { .. } => Mark::ToolStarted,
            Event::ToolResult { .. } => Mark::ToolAnswered,
            _ => return,
        };
        self.marks.lock().unwrap().push((mark, Instant::now()));
    }
}

impl TimingSink {
    /// Host time charged to each model call of a turn that ran from `start` to `end`:
    /// everything since the previous reply (or the start) until the request went out, and
    /// for the last call also what followed its reply. Waiting for the model is left out.
    pub fn overhead_per_model_call(&self, start: Instant, end: Instant) -> Vec<Duration> {
        let marks = self.marks.lock().unwrap();
        let mut overheads = Vec::new();
        let mut since = start;
        for &(mark, at) in marks.iter() {
            match mark {
                Mark::RequestSent => overheads.push(at - since),
                Mark::ReplyRead => since = at,
                Mark::ToolStarted | Mark::ToolAnswered => {}
            }
        }
        if let Some(last) = overheads.last_mut() {
            *last += end - since;
        }
        overheads
    }
}

impl TimingSink {
    /// The turn's time between model calls, split by what the host was doing.
    pub fn breakdown(&self) -> Breakdown {
        let marks = self.marks.lock().unwrap();
        let mut breakdown = Breakdown::default();
        for pair in marks.windows(2) {
            let ((from, start), (to, end)) = (pair[0], pair[1]);
            let span = end - start;
            match (from, to) {
                (Mark::ReplyRead, Mark::ToolStarted) => breakdown.reply_to_tool += span,
                (Mark::ToolStarted, Mark::ToolAnswered) => breakdown.in_tools += span,
                (Mark::ToolAnswered, Mark::RequestSent) => breakdown.tool_to_request += span,
                _ => {}
            }
        }
        breakdown
    }
}

/// The value at quantile `q` (0..=1) of sorted samples.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index]
}

/// Resident and peak resident memory of this process, in KiB (Linux `/proc`).
pub fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// CPU time used so far by this process (every thread) and by its thread named `thread`,
/// from `/proc` (Linux; zero elsewhere). Unlike wall time, this barely moves when the machine
/// is busy with something else, so it compares two builds more steadily.
pub fn cpu_time(thread: &str) -> (Duration, Duration) {
    let process = stat_cpu(Path::new("/proc/self/stat"));
    let tasks = std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten();
    let named = tasks
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm")).is_ok_and(|comm| comm.trim() == thread)
        })
        .map(|task| stat_cpu(&task.path().join("stat")))
        .sum();
    (process, named)
}

/// CPU time of the PostgreSQL server listening on `port` (its postmaster and every process
/// under it, with what their exited children used): the database's share of a model call's
/// cost, for the hosts-per-database calculation in docs/deployment.md. `pg_ctl` starts the
/// server detached, so it is found by its command line, not as this process's child.
pub fn server_cpu(port: u16) -> Duration {
    let processes: Vec<(u32, u32, Duration, String)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            let parent: u32 = fields.get(1)?.parse().ok()?;
            // utime, stime, cutime, cstime: fields 14 to 17.
            let ticks: u64 = (11..=14).filter_map(|i| fields.get(i)?.parse::<u64>().ok()).sum();
            let command = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let command = String::from_utf8_lossy(&command).replace('\0', " ");
            Some((pid, parent, Duration::from_millis(ticks * 10), command))
        })
        .collect();
    let port = format!(" -p {port} ");
    let Some(postmaster) = processes.iter().find(|(_, _, _, command)| {
        command.contains("postgres") && command.contains(&port) && !command.starts_with("sh ")
    }) else {
        return Duration::ZERO;
    };
    let mut under = vec![postmaster.0];
    let mut total = postmaster.2;
    while let Some(parent) = under.pop() {
        for (pid, _, cpu, _) in processes.iter().filter(|(_, of, _, _)| *of == parent) {
            total += *cpu;
            under.push(*pid);
        }
    }
    total
}

/// User + system time from a `/proc/.../stat` file, in clock ticks of 1/100 s (USER_HZ).
pub fn stat_cpu(path: &Path) -> Duration {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // The command name may hold spaces; the fields after it start with the state (field 3),
    // so utime and stime (fields 14 and 15) are the 12th and 13th.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("").split_whitespace().collect();
    let ticks: u64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum();
    Duration::from_millis(ticks * 10)
}
