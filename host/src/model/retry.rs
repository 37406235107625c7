//! What a model client does with a failed attempt: try again after a while, or give up.
//! The clients decide which failures are worth another attempt; the waiting is the same
//! for all of them.

use std::time::Duration;

use hyper::header::{HeaderMap, RETRY_AFTER};

use super::ModelError;
use crate::config::ModelConfig;

/// Longest wait a `Retry-After` header (or the doubling backoff) may impose.
pub(super) const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// How one attempt failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// Another attempt may succeed: after `retry_after` when the endpoint said, else after
    /// the backoff.
    Retryable { error: ModelError, retry_after: Option<Duration> },
    /// Another attempt would fail the same way.
    Final(ModelError),
}

/// `[model] max_retries` and `retry_backoff_ms`.
#[derive(Debug, Clone, Copy)]
pub(super) struct RetryPolicy {
    max_retries: u32,
    backoff: Duration,
}

impl RetryPolicy {
    pub(super) fn from_config(config: &ModelConfig) -> Self {
        Self { max_retries: config.max_retries, backoff: Duration::from_millis(config.retry_backoff_ms) }
    }

    /// What follows failed attempt `number` (from 1): the wait before the next one, or the
    /// error to give up with when another would fail too or the retries are used up. An
    /// HTTP error then says how many attempts were made.
    ///
    /// The clients keep the loop themselves: a loop over an async closure would make the
    /// call's future `Send` only for one lifetime, and the agent needs it `Send` for all.
    pub(super) fn after(&self, number: u32, failure: Failure) -> Result<Duration, ModelError> {
        let error = match failure {
            Failure::Retryable { error, retry_after } if number <= self.max_retries => {
                tracing::warn!(%error, attempt = number, "model call failed; retrying");
                return Ok(self.delay(number, retry_after));
            }
            Failure::Retryable { error, .. } | Failure::Final(error) => error,
        };
        Err(match error {
            ModelError::Http { status, body, .. } => ModelError::Http { status, attempts: number, body },
            other => other,
        })
    }

    /// The wait after failed attempt `number`: what the endpoint asked for, else the backoff
    /// doubled for every attempt before; never more than [`MAX_RETRY_AFTER`].
    fn delay(&self, number: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self.backoff.saturating_mul(2u32.saturating_pow(number.saturating_sub(1)));
        retry_after.unwrap_or(backoff).min(MAX_RETRY_AFTER)
    }
}

/// A `Retry-After` header in seconds (the form model endpoints send), if there is one.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// The innermost error's text: "connection refused", not the client's whole chain.
pub(super) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

    use super::*;

    fn policy(max_retries: u32, backoff_ms: u64) -> RetryPolicy {
        RetryPolicy { max_retries, backoff: Duration::from_millis(backoff_ms) }
    }

    #[test]
    fn the_wait_is_the_endpoints_or_the_doubling_backoff_and_capped() {
        let policy = policy(5, 100);
        assert_eq!(policy.delay(1, None), Duration::from_millis(100));
        assert_eq!(policy.delay(3, None), Duration::from_millis(400));
        assert_eq!(policy.delay(2, Some(Duration::from_secs(7))), Duration::from_secs(7));
        assert_eq!(policy.delay(2, Some(Duration::from_secs(3600))), MAX_RETRY_AFTER);
        assert_eq!(policy.delay(40, None), MAX_RETRY_AFTER, "a long run of failures does not overflow");
    }

    #[test]
    fn retry_after_is_read_in_seconds_and_anything_else_is_ignored() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static(" 12 "));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(12)));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&headers), None);
    }

    fn overloaded() -> Failure {
        let error = ModelError::Http { status: 529, attempts: 1, body: "overloaded".into() };
        Failure::Retryable { error, retry_after: None }
    }

    #[test]
    fn retryable_failures_are_tried_again_until_the_retries_run_out() {
        let policy = policy(2, 10);
        assert_eq!(policy.after(1, overloaded()).unwrap(), Duration::from_millis(10));
        assert_eq!(policy.after(2, overloaded()).unwrap(), Duration::from_millis(20));
        let error = policy.after(3, overloaded()).unwrap_err().to_string();
        assert!(error.contains("HTTP 529 after 3 attempt(s)"), "{error}");
    }

    #[test]
    fn a_final_failure_ends_at_once() {
        let bad = Failure::Final(ModelError::Http { status: 400, attempts: 1, body: "bad".into() });
        let error = policy(5, 10).after(1, bad).unwrap_err().to_string();
        assert!(error.contains("HTTP 400 after 1 attempt(s)"), "{error}");
        let dropped = ModelError::Stream { detail: "dropped".into() };
        let waited = policy(5, 10)
            .after(2, Failure::Retryable { error: dropped, retry_after: Some(Duration::from_secs(3)) });
        assert_eq!(waited.unwrap(), Duration::from_secs(3));
    }
}
