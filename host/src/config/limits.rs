//! A plugin call's limits: each written once, in [`limits!`], with its default and unit;
//! the struct, the per-plugin overrides, the check that each is at least 1 and the
//! conversions to bytes all come from there.

use serde::Deserialize;

/// The largest memory cap a plugin may ask for; the pooling allocator reserves this much.
pub const MAX_MEMORY_MB: u32 = 1024;

/// `n` KiB in bytes.
pub(crate) fn kib(n: u32) -> usize {
    (n as usize).saturating_mul(1 << 10)
}

/// `n` MiB in bytes.
pub(crate) fn mib(n: u32) -> usize {
    (n as usize).saturating_mul(1 << 20)
}

/// Declares [`Limits`], its defaults, [`LimitOverrides`] and [`Limits::each`] from one list
/// of `name: type = default, "unit";`.
macro_rules! limits {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident: $type:ty = $default:expr, $unit:literal;
    )*) => {
        /// Per-call sandbox limits.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Limits {
            $( $(#[doc = $doc])* pub $name: $type, )*
        }

        impl Default for Limits {
            fn default() -> Self {
                Self { $( $name: $default, )* }
            }
        }

        /// `[runtime.limits]` or `[plugin.limits]` as written: per-plugin overrides of
        /// [`Limits`].
        #[derive(Debug, Clone, Copy, Default, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct LimitOverrides {
            $( $(#[doc = $doc])* pub $name: Option<$type>, )*
            /// `[model]`'s endpoint caps as `[runtime.limits]` once spelled them: read there
            /// with a note, and refused with a located error in `[plugin.limits]` (they are
            /// the deployment's, not a plugin's).
            pub endpoint_body_mb: Option<u32>,
            /// As `endpoint_body_mb`.
            pub sse_line_kb: Option<u32>,
        }

        impl LimitOverrides {
            /// `base`, with what this table sets in its place.
            pub fn over(&self, base: Limits) -> Limits {
                Limits { $( $name: self.$name.unwrap_or(base.$name), )* }
            }
        }

        impl Limits {
            /// Each limit: its key, its value and its unit, in the order they are declared.
            pub fn each(&self) -> impl Iterator<Item = (&'static str, u64, &'static str)> {
                [$( (stringify!($name), u64::from(self.$name), $unit), )*].into_iter()
            }
        }
    };
}

limits! {
    /// Linear memory a call may grow to, in MiB.
    memory_mb: u32 = 64, "MiB";
    /// Wall-clock time a call may take, in milliseconds.
    timeout_ms: u64 = 2_000, "milliseconds";
    /// Wall-clock time a call of a plugin granted `process = true` may take, in
    /// milliseconds, in place of `timeout_ms` (see [`LimitOverrides::for_plugin`]): running
    /// a build or a test suite is what such a plugin is for, and two seconds cut every build
    /// short. Ten minutes: the longest a command is commonly let run, and still a bound.
    process_call_timeout_ms: u64 = 600_000, "milliseconds";
    /// Text a call may return (a tool result, an instruction), in KiB; longer text is cut
    /// with a note that says how much.
    max_output_kb: u32 = 256, "KiB";
    /// CPU seconds a process the plugin starts may use (`RLIMIT_CPU`).
    process_cpu_secs: u64 = 60, "seconds";
    /// Address space of such a process, in MiB (`RLIMIT_AS`).
    process_memory_mb: u64 = 4096, "MiB";
    /// Processes the sandbox may hold at once (`RLIMIT_NPROC`).
    process_max_procs: u64 = 256, "processes";
    /// Largest file such a process may write, in MiB (`RLIMIT_FSIZE`); also the size of
    /// its private `/tmp`.
    process_file_mb: u64 = 1024, "MiB";

    // Host-side caps: what a plugin's calls may make the host hold, beyond the plugin's own
    // memory. A call over one fails, naming it, and nothing of the call is kept. The
    // defaults are far above what an honest plugin needs.
    /// One state value, in KiB.
    state_value_kb: u32 = 4 << 10, "KiB";
    /// Keys one plugin may hold in one session.
    state_keys: u32 = 4_096, "keys";
    /// All of one plugin's keys and values in one session, in KiB.
    state_total_kb: u32 = 16 << 10, "KiB";
    /// Events one call may emit.
    events_per_call: u32 = 256, "events";
    /// One event's payload, in KiB.
    event_payload_kb: u32 = 256, "KiB";
    /// All the log text of one call, in KiB.
    log_kb_per_call: u32 = 1 << 10, "KiB";
}

impl Limits {
    /// `memory_mb` in bytes.
    pub fn memory_bytes(&self) -> usize {
        mib(self.memory_mb)
    }

    /// `max_output_kb` in bytes: the most text a call may return.
    pub fn max_output_bytes(&self) -> usize {
        kib(self.max_output_kb)
    }

    /// `state_value_kb` in bytes.
    pub fn state_value_bytes(&self) -> usize {
        kib(self.state_value_kb)
    }

    /// `state_total_kb` in bytes.
    pub fn state_total_bytes(&self) -> usize {
        kib(self.state_total_kb)
    }

    /// `event_payload_kb` in bytes.
    pub fn event_payload_bytes(&self) -> usize {
        kib(self.event_payload_kb)
    }

    /// `log_kb_per_call` in bytes.
    pub fn log_bytes_per_call(&self) -> usize {
        kib(self.log_kb_per_call)
    }

    /// The limit set by `key`, with its unit: `4096 KiB`, `10 events`.
    pub fn shown(&self, key: &str) -> Option<String> {
        self.each().find(|(name, ..)| *name == key).map(|(_, value, unit)| format!("{value} {unit}"))
    }
}

impl LimitOverrides {
    /// The limits of a plugin whose `[plugin.limits]` is `self`, over `base` (`[runtime.limits]`
    /// and the defaults). A plugin granted `process` (`runs_processes`) is given
    /// `process_call_timeout_ms` for a call, not `timeout_ms`: the deadline every call has
    /// is sized to the plugin's work, whatever the plugin asks — unless its own table sets
    /// `timeout_ms`, the spelling that raised (or lowered) such a plugin's deadline before.
    pub fn for_plugin(&self, base: Limits, runs_processes: bool) -> Limits {
        let mut limits = self.over(base);
        if runs_processes && self.timeout_ms.is_none() {
            limits.timeout_ms = limits.process_call_timeout_ms;
        }
        limits
    }

    /// The endpoint caps this table sets, by key: `[model]`'s, in their old place.
    pub(crate) fn endpoint_caps_set(&self) -> impl Iterator<Item = (&'static str, u32)> {
        [("endpoint_body_mb", self.endpoint_body_mb), ("sse_line_kb", self.sse_line_kb)]
            .into_iter()
            .filter_map(|(key, value)| Some((key, value?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_is_listed_once_with_its_unit_and_converted_in_one_place() {
        let limits = Limits::default();
        let keys: Vec<_> = limits.each().map(|(key, ..)| key).collect();
        assert_eq!(keys.len(), 14);
        assert_eq!((keys[0], keys[13]), ("memory_mb", "log_kb_per_call"));
        assert_eq!(limits.shown("state_value_kb").as_deref(), Some("4096 KiB"));
        assert_eq!(limits.shown("events_per_call").as_deref(), Some("256 events"));
        assert_eq!(limits.shown("nothing"), None);
        assert_eq!((limits.max_output_bytes(), limits.memory_bytes()), (256 << 10, 64 << 20));
        let over = LimitOverrides { max_output_kb: Some(4), ..LimitOverrides::default() }.over(limits);
        assert_eq!((over.max_output_bytes(), over.memory_mb), (4 << 10, 64));
    }
}

#[cfg(test)]
mod deadline_tests {
    use super::*;

    #[test]
    fn a_plugin_that_runs_processes_gets_the_process_call_deadline_unless_it_sets_its_own() {
        // The shipped config's `[runtime] limits = { timeout_ms = 2000, ... }`.
        let runtime =
            LimitOverrides { timeout_ms: Some(2_000), ..LimitOverrides::default() }.over(Limits::default());
        let unset = LimitOverrides::default();
        assert_eq!(unset.for_plugin(runtime, false).timeout_ms, 2_000);
        assert_eq!(unset.for_plugin(runtime, true).timeout_ms, 600_000, "a build is not cut at 2 s");
        let raised = LimitOverrides { process_call_timeout_ms: Some(3_600_000), ..LimitOverrides::default() };
        assert_eq!(raised.for_plugin(runtime, true).timeout_ms, 3_600_000);
        assert_eq!(
            raised.for_plugin(runtime, false).timeout_ms,
            2_000,
            "only for a plugin that runs processes"
        );
        let own = LimitOverrides { timeout_ms: Some(120_000), ..LimitOverrides::default() };
        assert_eq!(own.for_plugin(runtime, true).timeout_ms, 120_000, "the older spelling still holds");
    }
}
