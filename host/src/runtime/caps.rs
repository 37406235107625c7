//! Host-side caps: what one plugin call may make the host hold — state per value and per
//! session, events, log text. `memory_mb` bounds the plugin's own memory only; everything it
//! hands the host through an import is counted here. An import that would go over a cap
//! traps the call at once (so a flood stops at the cap, not at the deadline), and the call
//! fails whole: its writes and events are dropped with its store.

use crate::config::Limits;

/// One host-side cap, by its key in `[runtime.limits]` / `[plugin.limits]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    StateValue,
    StateKeys,
    StateTotal,
    EventsPerCall,
    EventPayload,
    LogPerCall,
}

impl Cap {
    /// The config key that sets it.
    pub fn key(self) -> &'static str {
        match self {
            Cap::StateValue => "state_value_kb",
            Cap::StateKeys => "state_keys",
            Cap::StateTotal => "state_total_kb",
            Cap::EventsPerCall => "events_per_call",
            Cap::EventPayload => "event_payload_kb",
            Cap::LogPerCall => "log_kb_per_call",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Cap::StateValue => "one state value",
            Cap::StateKeys => "state keys per session",
            Cap::StateTotal => "state per session",
            Cap::EventsPerCall => "events per call",
            Cap::EventPayload => "one event payload",
            Cap::LogPerCall => "log text per call",
        }
    }

    /// The cap's value as configured, with its unit.
    fn configured(self, limits: &Limits) -> String {
        limits.shown(self.key()).unwrap_or_default()
    }
}

/// The caps of one call, in bytes and counts, and what the call has used of the per-call ones.
#[derive(Debug)]
pub struct CallCaps {
    limits: Limits,
    /// Log bytes written so far.
    log_bytes: usize,
    /// The plugin's keys and their bytes (keys and values) in the session, as they would be
    /// with the call's writes so far; counted on the first write.
    state: Option<StateUsage>,
    /// The cap the call went over, if it did: the call then fails with it.
    hit: Option<OverCap>,
}

/// Keys and bytes of one plugin's state in one session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateUsage {
    pub keys: usize,
    pub bytes: usize,
}

/// A cap a call went over, and by what.
#[derive(Debug, Clone)]
pub struct OverCap {
    pub cap: Cap,
    pub detail: String,
}

impl CallCaps {
    pub fn new(limits: Limits) -> Self {
        Self { limits, log_bytes: 0, state: None, hit: None }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn hit(&self) -> Option<&OverCap> {
        self.hit.as_ref()
    }

    /// The error text for `over`, naming the cap and the key that sets it.
    pub fn describe(&self, over: &OverCap) -> String {
        format!(
            "{} went over the cap on {} (`{}` = {}, in [runtime.limits] or [plugin.limits])",
            over.detail,
            over.cap.what(),
            over.cap.key(),
            over.cap.configured(&self.limits),
        )
    }

    /// Notes that the call went over `cap`; the error ends the call as a trap.
    fn over(&mut self, cap: Cap, detail: String) -> wasmtime::Error {
        let over = OverCap { cap, detail };
        let error = wasmtime::Error::msg(self.describe(&over));
        self.hit.get_or_insert(over);
        error
    }

    pub fn state_value(&mut self, key: &str, bytes: usize) -> wasmtime::Result<()> {
        if bytes > self.limits.state_value_bytes() {
            return Err(
                self.over(Cap::StateValue, format!("state value `{key}` ({} KiB)", bytes.div_ceil(1024)))
            );
        }
        Ok(())
    }

    /// Accounts for a write of `key`, whose value goes from `old` bytes to `new` bytes
    /// (`None`: absent). `usage` gives the session's figures before the call's first write.
    pub fn state_write(
        &mut self,
        key: &str,
        old: Option<usize>,
        new: Option<usize>,
        usage: impl FnOnce() -> StateUsage,
    ) -> wasmtime::Result<()> {
        let before = *self.state.get_or_insert_with(usage);
        let entry = |value: Option<usize>| value.map_or((0, 0), |bytes| (1, key.len() + bytes));
        let (old_keys, old_bytes) = entry(old);
        let (new_keys, new_bytes) = entry(new);
        // Saturating: another call of the session may have changed the bag since `before`.
        let after = StateUsage {
            keys: before.keys.saturating_sub(old_keys) + new_keys,
            bytes: before.bytes.saturating_sub(old_bytes) + new_bytes,
        };
        // A write that shrinks the state is always allowed, even over a cap lowered since.
        if after.keys > self.limits.state_keys as usize && after.keys > before.keys {
            return Err(self.over(Cap::StateKeys, format!("writing `{key}` ({} keys)", after.keys)));
        }
        if after.bytes > self.limits.state_total_bytes() && after.bytes > before.bytes {
            let total = after.bytes.div_ceil(1024);
            return Err(self.over(Cap::StateTotal, format!("writing `{key}` ({total} KiB in all)")));
        }
        self.state = Some(after);
        Ok(())
    }

    /// Checks one more event, the call's `count`-th, of `bytes`.
    pub fn event(&mut self, kind: &str, count: usize, bytes: usize) -> wasmtime::Result<()> {
        if count > self.limits.events_per_call as usize {
            return Err(self.over(Cap::EventsPerCall, format!("event `{kind}` (the {count}th)")));
        }
        if bytes > self.limits.event_payload_bytes() {
            let size = bytes.div_ceil(1024);
            return Err(self.over(Cap::EventPayload, format!("event `{kind}` ({size} KiB of payload)")));
        }
        Ok(())
    }

    pub fn log(&mut self, bytes: usize) -> wasmtime::Result<()> {
        self.log_bytes = self.log_bytes.saturating_add(bytes);
        if self.log_bytes > self.limits.log_bytes_per_call() {
            let total = self.log_bytes.div_ceil(1024);
            return Err(self.over(Cap::LogPerCall, format!("logging ({total} KiB in this call)")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(keys: u32, total_kb: u32) -> CallCaps {
        CallCaps::new(Limits { state_keys: keys, state_total_kb: total_kb, ..Limits::default() })
    }

    #[test]
    fn rewriting_a_key_counts_the_difference_and_a_shrinking_write_is_allowed() {
        let mut caps = limited(2, 1);
        let start = || StateUsage { keys: 1, bytes: 1000 };
        // `a` holds 997 bytes (998 with its key): growing it to 1021 fits 1 KiB exactly.
        caps.state_write("a", Some(997), Some(1021), start).unwrap();
        assert!(caps.state_write("a", Some(1021), Some(1022), start).is_err());
        assert_eq!(caps.hit().unwrap().cap, Cap::StateTotal);

        // Already over both caps' room (lowered since): shrinking is fine, a new key is not.
        let mut caps = limited(1, 1);
        let over = || StateUsage { keys: 1, bytes: 4000 };
        caps.state_write("a", Some(3997), Some(10), over).unwrap();
        assert!(caps.state_write("b", None, Some(1), over).is_err(), "a second key");
        assert_eq!(caps.hit().unwrap().cap, Cap::StateKeys);
    }

    #[test]
    fn every_cap_is_a_limit_and_shows_its_value_with_its_unit() {
        let limits = Limits { state_total_kb: 64, events_per_call: 10, ..Limits::default() };
        let caps = [
            Cap::StateValue,
            Cap::StateKeys,
            Cap::StateTotal,
            Cap::EventsPerCall,
            Cap::EventPayload,
            Cap::LogPerCall,
        ];
        for cap in caps {
            assert!(limits.shown(cap.key()).is_some(), "{}", cap.key());
        }
        assert_eq!(Cap::StateTotal.configured(&limits), "64 KiB");
        assert_eq!(Cap::EventsPerCall.configured(&limits), "10 events");
        assert_eq!(Cap::StateKeys.configured(&limits), "4096 keys");
    }
}
