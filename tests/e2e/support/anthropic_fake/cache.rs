//! The prompt cache as the API documents it: a request's blocks in order (tools, then the
//! system prompt, then the messages); a block with `cache_control` is a breakpoint, and the
//! prefix up to it is written to the cache; a later request reads the longest prefix it
//! shares with one written before, found at its own breakpoints or up to 20 blocks before
//! each. A prefix matches only byte for byte (`cache_control` itself aside), so a client
//! whose prefix changes from call to call reads nothing.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

/// How far before a breakpoint the API looks for a prefix written earlier.
const LOOKBACK: usize = 20;

/// Tokens as the fake counts them: one per four bytes of a block's JSON.
fn tokens(item: &str) -> u64 {
    item.len().div_ceil(4) as u64
}

/// The prefixes written so far, by their hash.
#[derive(Default)]
pub struct PromptCache {
    written: HashSet<u64>,
}

/// One request's usage of the prompt's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheUsage {
    /// After the last breakpoint: neither read nor written.
    pub input: u64,
    pub read: u64,
    pub written: u64,
}

impl PromptCache {
    /// Reads what `request` shares with earlier ones and writes its own prefixes.
    pub fn serve(&mut self, request: &Value) -> CacheUsage {
        let items = blocks(request);
        let mut hasher = DefaultHasher::new();
        let mut prefixes = Vec::with_capacity(items.len());
        let mut total = 0;
        for (text, _) in &items {
            text.hash(&mut hasher);
            total += tokens(text);
            prefixes.push((hasher.finish(), total));
        }
        let breakpoints: Vec<usize> =
            items.iter().enumerate().filter(|(_, (_, breakpoint))| *breakpoint).map(|(at, _)| at).collect();
        let Some(&last) = breakpoints.last() else {
            return CacheUsage { input: total, read: 0, written: 0 };
        };
        let hit = breakpoints
            .iter()
            .flat_map(|&at| (at.saturating_sub(LOOKBACK)..=at).rev())
            .filter(|&at| self.written.contains(&prefixes[at].0))
            .max();
        let read = hit.map_or(0, |at| prefixes[at].1);
        let through_last = prefixes[last].1;
        for &at in &breakpoints {
            self.written.insert(prefixes[at].0);
        }
        CacheUsage { input: total - through_last, read, written: through_last.saturating_sub(read) }
    }
}

/// The request's blocks in cache order, each as the text it is matched by and whether it
/// is a breakpoint. A block's text names its place (tool, system, which message and role),
/// so equal blocks in other places do not match.
fn blocks(request: &Value) -> Vec<(String, bool)> {
    let mut items = Vec::new();
    let mut push = |place: String, block: &Value| {
        let mut block = block.clone();
        let breakpoint = block.as_object_mut().and_then(|block| block.remove("cache_control")).is_some();
        items.push((format!("{place}:{block}"), breakpoint));
    };
    for tool in request["tools"].as_array().into_iter().flatten() {
        push("tool".into(), tool);
    }
    match &request["system"] {
        Value::Array(blocks) => blocks.iter().for_each(|block| push("system".into(), block)),
        Value::Null => {}
        text => push("system".into(), text),
    }
    for (index, message) in request["messages"].as_array().into_iter().flatten().enumerate() {
        let place = format!("{index}.{}", message["role"].as_str().unwrap_or_default());
        match &message["content"] {
            Value::Array(blocks) => blocks.iter().for_each(|block| push(place.clone(), block)),
            text => push(place, text),
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(system: &str, messages: Value) -> Value {
        json!({"system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}], "messages": messages})
    }

    fn user(text: &str, breakpoint: bool) -> Value {
        let mut block = json!({"type": "text", "text": text});
        if breakpoint {
            block["cache_control"] = json!({"type": "ephemeral"});
        }
        json!({"role": "user", "content": [block]})
    }

    #[test]
    fn a_grown_conversation_reads_what_the_last_call_wrote_and_a_changed_prefix_reads_nothing() {
        let mut cache = PromptCache::default();
        let first = cache.serve(&request("the system prompt", json!([user("one", true)])));
        assert_eq!(first.read, 0);
        assert!(first.written > 0);
        let assistant = json!({"role": "assistant", "content": [{"type": "text", "text": "two"}]});
        let grown = json!([user("one", false), assistant, user("three", true)]);
        let second = cache.serve(&request("the system prompt", grown.clone()));
        assert_eq!(second.read, first.written, "the whole prefix the first call wrote");
        assert!(second.written > 0, "and the new messages are written");
        let changed = cache.serve(&request("another system prompt", grown));
        assert_eq!(changed.read, 0);
    }
}
