//! How many times the host really called each export of one loaded plugin (a contribution
//! served from the reuse memo or a hook its filter skipped is not a call): shown by
//! `/plugins`, read by tests and the load benchmark.

use std::sync::atomic::{AtomicU64, Ordering};

use super::export::Export;

/// Calls made, per export, and the instances they ran in.
#[derive(Debug, Default)]
pub struct CallCounts {
    calls: [AtomicU64; Export::ALL.len()],
    instances: AtomicU64,
}

impl CallCounts {
    pub(super) fn count(&self, export: Export) {
        self.calls[export as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// One more instance made for a call: most calls make their own, but a view asked
    /// right after a call that moved its state runs in that call's.
    pub(super) fn count_instance(&self) {
        self.instances.fetch_add(1, Ordering::Relaxed);
    }

    pub fn get(&self, export: Export) -> u64 {
        self.calls[export as usize].load(Ordering::Relaxed)
    }

    /// Instances made for calls since load, those every load makes included.
    pub fn instances(&self) -> u64 {
        self.instances.load(Ordering::Relaxed)
    }

    /// `provide 12, call-tool 4`: the exports called since load, leaving out those every
    /// load makes (see [`Export::at_load`]).
    pub fn summary(&self) -> String {
        let parts: Vec<String> = Export::ALL
            .into_iter()
            .filter(|export| !export.at_load())
            .filter(|&export| self.get(export) > 0)
            .map(|export| format!("{} {}", export.wit_name(), self.get(export)))
            .collect();
        if parts.is_empty() { "none".to_owned() } else { parts.join(", ") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_export_apart_and_summarises_the_ones_called() {
        let counts = CallCounts::default();
        assert_eq!(counts.summary(), "none");
        counts.count(Export::Manifest);
        counts.count(Export::Provide);
        counts.count(Export::Provide);
        counts.count(Export::PostToolUse);
        counts.count_instance();
        assert_eq!(counts.instances(), 1);
        assert_eq!(counts.get(Export::Provide), 2);
        assert_eq!(counts.get(Export::PreToolUse), 0);
        assert_eq!(counts.summary(), "provide 2, post-tool-use 1");
    }
}
