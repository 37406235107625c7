//! How many times the host really called each export of one loaded plugin (a contribution
//! served from the reuse memo or a hook its filter skipped is not a call): shown by
//! `/plugins`, read by tests and the load benchmark.

use std::sync::atomic::{AtomicU64, Ordering};

use super::export::Export;

/// Calls made, per export.
#[derive(Debug, Default)]
pub struct CallCounts([AtomicU64; Export::ALL.len()]);

impl CallCounts {
    pub(super) fn count(&self, export: Export) {
        self.0[export as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn get(&self, export: Export) -> u64 {
        self.0[export as usize].load(Ordering::Relaxed)
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
        assert_eq!(counts.get(Export::Provide), 2);
        assert_eq!(counts.get(Export::PreToolUse), 0);
        assert_eq!(counts.summary(), "provide 2, post-tool-use 1");
    }
}
