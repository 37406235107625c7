use std::any::Any;
use std::cell::RefCell;

use serde::de::DeserializeOwned;

use crate::bindings::agent_host::plugin::types::CallContext;

/// Where a call runs: the plugin's typed configuration, the session, the turn's progress.
pub struct Context<C> {
    /// The configuration `configure` settled on, as the plugin's own type.
    pub config: C,
    /// The session this call belongs to (for display; state always goes to this session).
    pub session_id: String,
    /// Model calls this session has made so far.
    pub model_calls: u64,
    /// Model calls the current user turn has made so far.
    pub turn_iteration: u32,
    /// In a tool's handler, the id of the call it runs: what a `pre-compact` hook later finds
    /// its result by ([`history::result_of`](crate::history::result_of)). None in any other call.
    pub call_id: Option<String>,
}

impl<C: DeserializeOwned + 'static> Context<C> {
    /// Runs `f` with the call's typed context, `call_id` in it; an error when the
    /// configuration no longer fits `C` (the plugin's config type changed under a running
    /// host).
    ///
    /// The host may make several calls in one instance (a tool call, then the contribution
    /// and view it asks ahead), each with the same configuration text: it is parsed once per
    /// instance and the context kept between them, the call's own fields set anew each time.
    pub(crate) fn with<R>(
        raw: CallContext,
        call_id: Option<String>,
        f: impl FnOnce(&Context<C>) -> R,
    ) -> Result<R, String> {
        let kept = KEPT
            .with_borrow_mut(Option::take)
            .and_then(|kept| kept.downcast::<Kept<C>>().ok())
            .filter(|kept| same_text(&kept.config_text, &raw.config));
        let mut kept = match kept {
            Some(kept) => *kept,
            None => {
                let config = serde_json::from_str(&raw.config)
                    .map_err(|error| format!("the configuration does not fit: {error}"))?;
                Kept { config_text: raw.config, context: Context::with_config(config) }
            }
        };
        let context = &mut kept.context;
        context.session_id = raw.session_id;
        context.model_calls = raw.model_calls;
        context.turn_iteration = raw.turn_iteration;
        context.call_id = call_id;
        let result = f(&kept.context);
        KEPT.with_borrow_mut(|slot| *slot = Some(Box::new(kept)));
        Ok(result)
    }
}

/// Whether `a` and `b` are the same text, compared eight bytes at a time: the guest's
/// `memcmp` takes one byte at a time, which for a configuration with long default texts
/// costs about what parsing it again would.
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let word = |chunk: &[u8]| chunk.first_chunk::<8>().map(|bytes| u64::from_ne_bytes(*bytes));
    let (mut a_words, mut b_words) = (a.chunks_exact(8), b.chunks_exact(8));
    a_words.by_ref().zip(b_words.by_ref()).all(|(x, y)| word(x) == word(y))
        && a_words.remainder() == b_words.remainder()
}

/// The last call's context in this instance, with the configuration text it was parsed from.
struct Kept<C> {
    config_text: String,
    context: Context<C>,
}

thread_local! {
    /// A [`Kept`] of the plugin's configuration type; an instance runs one call at a time.
    static KEPT: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

impl<C> Context<C> {
    /// A context for unit tests: `config`, an empty session id, no model calls yet.
    pub fn with_config(config: C) -> Self {
        Self { config, session_id: String::new(), model_calls: 0, turn_iteration: 0, call_id: None }
    }
}
