//! Encodings of the request parts that come back unchanged from call to call: the system
//! prompt and the tool list stay the same until a plugin changes them or a reload does, so
//! once the history is kept encoded (`HistoryEncodings`), escaping them anew was most of what
//! building a request body cost.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::ToolDefinition;
use crate::recent::RecentlyUsed;

/// Distinct values kept of each kind: enough for the modes of a deployment.
const KEPT: usize = 4;

/// The recently encoded system prompts and tool lists of one model client.
#[derive(Default)]
pub struct Encodings {
    pub(super) system: Recent<String>,
    pub(super) tools: Recent<Vec<ToolDefinition>>,
}

/// One encoding and what it was encoded from.
pub(super) struct Encoded<K> {
    source: K,
    pub(super) json: Box<RawValue>,
}

/// Recently encoded values of one kind.
pub(super) struct Recent<K>(RecentlyUsed<Arc<Encoded<K>>>);

impl<K> Default for Recent<K> {
    fn default() -> Self {
        Self(RecentlyUsed::new(KEPT))
    }
}

impl<K> Recent<K> {
    /// The encoding kept for a source `same` accepts; else `encode`'s, kept with `source()`.
    pub(super) fn get_or_encode(
        &self,
        same: impl Fn(&K) -> bool,
        source: impl FnOnce() -> K,
        encode: impl FnOnce() -> String,
    ) -> Arc<Encoded<K>> {
        if let Some(kept) = self.0.find(|kept| same(&kept.source)) {
            return kept;
        }
        // Encoded outside the list's lock: other sessions' calls need not wait for it.
        let json = RawValue::from_string(encode()).expect("serde_json writes JSON");
        let encoded = Arc::new(Encoded { source: source(), json });
        self.0.put(encoded.clone(), |other| same(&other.source));
        encoded
    }
}

/// Whether two tool lists encode the same: the same tools, in the same order. Schemas come
/// shared from the host's schema cache, so the same schema is usually the same allocation
/// and its text need not be compared.
pub(super) fn same_tools(a: &[ToolDefinition], b: &[ToolDefinition]) -> bool {
    let same_schema = |a: &ToolDefinition, b: &ToolDefinition| {
        Arc::ptr_eq(&a.parameters, &b.parameters) || a.parameters.get() == b.parameters.get()
    };
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(a, b)| a.name == b.name && a.description == b.description && same_schema(a, b))
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
        assert_eq!(encode("plan").json.get(), "\"plan\"");
    }
}
