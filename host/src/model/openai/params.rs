//! The optional request parameters the host sends and an endpoint may refuse.
//!
//! Chat Completions servers differ in what they take: some refuse `stream_options`, reasoning
//! models refuse `max_tokens` and `temperature`. A 400 that names one of them is answered by
//! sending the request once more without it; the client then leaves it out for as long as it
//! lives (until the host restarts or the config reloads), with a warning in the log.

use std::sync::atomic::{AtomicU8, Ordering};

/// One optional parameter of the host's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    StreamOptions,
    MaxTokens,
    Temperature,
}

impl Param {
    const ALL: [Param; 3] = [Param::StreamOptions, Param::MaxTokens, Param::Temperature];

    /// The parameter's name in the request body.
    pub fn name(self) -> &'static str {
        match self {
            Param::StreamOptions => "stream_options",
            Param::MaxTokens => "max_tokens",
            Param::Temperature => "temperature",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of parameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Params(u8);

impl Params {
    pub fn contains(self, param: Param) -> bool {
        self.0 & param.bit() != 0
    }

    pub fn insert(&mut self, param: Param) {
        self.0 |= param.bit();
    }

    fn iter(self) -> impl Iterator<Item = Param> {
        Param::ALL.into_iter().filter(move |param| self.contains(*param))
    }
}

/// The parameters one client has stopped sending, shared by its concurrent calls.
#[derive(Debug, Default)]
pub struct Dropped(AtomicU8);

impl Dropped {
    pub fn get(&self) -> Params {
        Params(self.0.load(Ordering::Relaxed))
    }

    /// Leaves `param` out from now on; false when it already was.
    pub fn drop_param(&self, param: Param) -> bool {
        self.0.fetch_or(param.bit(), Ordering::Relaxed) & param.bit() == 0
    }
}

/// Which of the parameters in `sent` a 400 `body` refuses: the one its `error.param` names
/// (OpenAI's error shape), else the first whose name the text quotes.
pub fn refused(body: &str, sent: Params) -> Option<Param> {
    let named = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|value| value.pointer("/error/param").and_then(|param| param.as_str()).map(str::to_owned));
    if let Some(named) = named
        && let Some(param) = sent.iter().find(|param| param.name() == named)
    {
        return Some(param);
    }
    sent.iter().find(|param| quotes(body, param.name()))
}

/// Whether `text` has `name` as a word of its own: `max_tokens` is not in
/// `max_completion_tokens`, nor in `max_tokens_per_doc`.
fn quotes(text: &str, name: &str) -> bool {
    let part_of_a_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(part_of_a_name) && !after.is_some_and(part_of_a_name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Params {
        let mut params = Params::default();
        Param::ALL.into_iter().for_each(|param| params.insert(param));
        params
    }

    #[test]
    fn the_param_field_of_an_openai_error_names_it() {
        let body = r#"{"error":{"message":"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}"#;
        assert_eq!(refused(body, all()), Some(Param::Temperature));
    }

    #[test]
    fn otherwise_the_text_quoting_a_name_as_a_word_does() {
        let body = r#"{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not permitted'}]","type":"BadRequestError","param":null,"code":400}"#;
        assert_eq!(refused(body, all()), Some(Param::StreamOptions));
        let elsewhere = "max_completion_tokens must be at least 1";
        assert_eq!(refused(elsewhere, all()), None, "not `max_tokens`");
        let mut only_temperature = Params::default();
        only_temperature.insert(Param::Temperature);
        assert_eq!(refused(body, only_temperature), None, "a parameter not sent is not refused");
    }

    #[test]
    fn a_parameter_is_dropped_once() {
        let dropped = Dropped::default();
        assert!(dropped.drop_param(Param::MaxTokens));
        assert!(!dropped.drop_param(Param::MaxTokens));
        assert!(dropped.get().contains(Param::MaxTokens) && !dropped.get().contains(Param::StreamOptions));
    }
}
