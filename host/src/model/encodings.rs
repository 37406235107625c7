//! Encodings of the request parts that come back unchanged from call to call: the system
//! prompt and the tool list stay the same until a mode switch or a reload changes them, so
//! once the history is kept encoded (`Message::wire`), escaping them anew was most of what
//! building a request body cost.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::value::RawValue;

use super::ToolDefinition;

/// Distinct values kept of each kind: enough for the modes of a deployment.
const KEPT: usize = 4;

/// The recently encoded system prompts and tool lists of one model client.
#[derive(Default)]
pub struct Encodings {
    pub(super) system: Recent<String>,
    pub(super) tools: Recent<Vec<ToolDefinition>>,
}

/// Recently encoded values of one kind, with what each was encoded from; the most recently
/// used first.
pub(super) struct Recent<K> {
    kept: Mutex<VecDeque<(K, Arc<RawValue>)>>,
}

impl<K> Default for Recent<K> {
    fn default() -> Self {
        Self { kept: Mutex::new(VecDeque::new()) }
    }
}

impl<K> Recent<K> {
    /// The encoding kept for a source `same` accepts; else `encode`'s, kept with `source()`.
    pub(super) fn get_or_encode(
        &self,
        same: impl Fn(&K) -> bool,
        source: impl FnOnce() -> K,
        encode: impl FnOnce() -> String,
    ) -> Arc<RawValue> {
        {
            let mut kept = self.lock();
            if let Some(position) = kept.iter().position(|(kept, _)| same(kept)) {
                let entry = kept.remove(position).expect("the position was just found");
                let encoded = entry.1.clone();
                kept.push_front(entry);
                return encoded;
            }
        }
        // Encoded outside the lock: other sessions' calls need not wait for it.
        let encoded: Arc<RawValue> = RawValue::from_string(encode()).expect("serde_json writes JSON").into();
        let mut kept = self.lock();
        kept.push_front((source(), encoded.clone()));
        kept.truncate(KEPT);
        encoded
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<(K, Arc<RawValue>)>> {
        self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Whether two tool lists encode the same: the same tools, in the same order.
pub(super) fn same_tools(a: &[ToolDefinition], b: &[ToolDefinition]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            a.name == b.name && a.description == b.description && a.parameters.get() == b.parameters.get()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_encoded_once_while_it_is_among_the_last_few() {
        let recent: Recent<String> = Recent::default();
        let encode = |text: &str| {
            recent.get_or_encode(|kept| kept == text, || text.to_owned(), || format!("\"{text}\""))
        };
        let first = encode("plan");
        assert!(Arc::ptr_eq(&first, &encode("plan")), "encoded again");
        for other in ["a", "b", "c"] {
            encode(other);
        }
        assert!(Arc::ptr_eq(&first, &encode("plan")), "four distinct values are all kept");
        for other in ["d", "e", "f", "g"] {
            encode(other);
        }
        assert!(!Arc::ptr_eq(&first, &encode("plan")), "the least recently used went first");
        assert_eq!(encode("plan").get(), "\"plan\"");
    }
}
