//! The results of the session's recent tool calls (its child agents' too), kept whole for
//! `/show`: a card shows a result as one line, this is where the rest of it stays. Bounded by
//! count and by bytes.

use std::collections::VecDeque;
use std::sync::Mutex;

use agent_host::events::{Event, EventSink};
use agent_host::unpoisoned::LockUnpoisoned as _;

/// How many results are kept.
pub const KEPT_RESULTS: usize = 20;
/// How many bytes of results are kept in all; a single result larger than this keeps its
/// first bytes.
pub const KEPT_RESULT_BYTES: usize = 1 << 20;

/// One tool call's result as this console keeps it for `/show` (not [`agent_host::tools::ToolResult`]:
/// it carries the tool's name and what was cut to keep it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptResult {
    pub tool: String,
    pub ok: bool,
    /// The text the model received, as it was (or its first [`KEPT_RESULT_BYTES`]).
    pub output: String,
    /// Bytes left out of `output` because the result was larger than the bound.
    pub cut: usize,
}

/// The recent results, the newest last.
#[derive(Debug, Default)]
pub struct KeptResults {
    kept: VecDeque<KeptResult>,
    bytes: usize,
}

impl KeptResults {
    pub fn keep(&mut self, tool: &str, ok: bool, output: &str) {
        let mut end = output.len().min(KEPT_RESULT_BYTES);
        while !output.is_char_boundary(end) {
            end -= 1;
        }
        let result = KeptResult {
            tool: tool.to_owned(),
            ok,
            output: output[..end].to_owned(),
            cut: output.len() - end,
        };
        self.bytes += result.output.len();
        self.kept.push_back(result);
        while self.kept.len() > KEPT_RESULTS || self.bytes > KEPT_RESULT_BYTES {
            let Some(oldest) = self.kept.pop_front() else { break };
            self.bytes -= oldest.output.len();
        }
    }

    /// The `n`-th most recent result: 1 is the last.
    pub fn recent(&self, n: usize) -> Option<&KeptResult> {
        self.kept.len().checked_sub(n).and_then(|index| self.kept.get(index))
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }
}

/// A sink that keeps each tool result it passes on to `inner`.
pub struct Keeping<'a> {
    inner: &'a dyn EventSink,
    results: Mutex<KeptResults>,
}

impl<'a> Keeping<'a> {
    pub fn new(inner: &'a dyn EventSink) -> Self {
        Self { inner, results: Mutex::default() }
    }

    pub fn results(&self) -> std::sync::MutexGuard<'_, KeptResults> {
        self.results.lock_unpoisoned()
    }
}

impl EventSink for Keeping<'_> {
    fn emit(&self, event: &Event) {
        // A child agent's results too: its card shows none of them whole.
        let (agent, _, own) = super::child_cards::unwrapped(event);
        if let Event::ToolResult { name, ok, output, .. } = own {
            match agent {
                Some(agent) => self.results().keep(&format!("{agent} › {name}"), *ok, output),
                None => self.results().keep(name, *ok, output),
            }
        }
        self.inner.emit(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_are_kept_within_the_count_and_the_bytes() {
        let mut results = KeptResults::default();
        for n in 0..KEPT_RESULTS + 3 {
            results.keep("t", true, &n.to_string());
        }
        assert_eq!(results.len(), KEPT_RESULTS);
        assert_eq!(results.recent(1).unwrap().output, (KEPT_RESULTS + 2).to_string());
        assert_eq!(results.recent(KEPT_RESULTS).unwrap().output, "3");
        assert_eq!(results.recent(KEPT_RESULTS + 1), None);
        assert_eq!(results.recent(0), None);

        let half = "x".repeat(KEPT_RESULT_BYTES / 2);
        results.keep("big", true, &half);
        results.keep("big", true, &half);
        assert_eq!(results.len(), 2, "the two halves fill the bytes: every small one is gone");
        results.keep("small", false, "s");
        assert_eq!(results.len(), 2);
        assert_eq!(results.recent(1).unwrap().tool, "small");

        // The bound falls inside the `é`: the cut is before it.
        let huge = format!("{}é{}", "y".repeat(KEPT_RESULT_BYTES - 1), "z".repeat(10));
        results.keep("huge", true, &huge);
        let kept = results.recent(1).unwrap();
        assert_eq!(results.len(), 2, "its first bytes and the one-byte result fill the bound");
        assert_eq!(kept.output.len(), KEPT_RESULT_BYTES - 1);
        assert!(kept.output.ends_with('y'));
        assert_eq!(kept.cut, huge.len() - kept.output.len());
    }
}
