/// Why a model call failed. None of these ever contains the API key: text the endpoint
/// sent back goes through [`ModelError::redact`] first.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("cannot reach the model endpoint at {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("the model endpoint rejected the API key (HTTP {status}); check the variable `{key_env}`")]
    Unauthorized { status: u16, key_env: String },
    #[error("the model endpoint answered HTTP {status} after {attempts} attempt(s): {body}")]
    Http { status: u16, attempts: u32, body: String },
    #[error("the model did not finish within {secs} s")]
    Timeout { secs: u64 },
    #[error("the model's reply broke off or could not be read: {detail}")]
    Stream { detail: String },
    /// The reply broke off (a timeout, a dropped connection) after part of it had streamed:
    /// `partial` is what arrived, for the loop to keep.
    #[error("the model's reply was cut off: {detail}")]
    Cut { detail: String, partial: Box<super::ModelReply> },
    /// The endpoint refused the request as longer than the model's context window.
    #[error("the request is longer than the model's context window (HTTP {status}): {body}")]
    ContextTooLong { status: u16, body: String },
    #[error("scripted model: {detail}")]
    Script { detail: String },
}

/// What stands in for a secret that an endpoint echoed back.
pub const REDACTED: &str = "[redacted]";

impl ModelError {
    /// The kind of failure, in a few words that never vary with the details (a trace's
    /// `error.type`).
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::Unreachable { .. } => "unreachable",
            ModelError::Unauthorized { .. } => "unauthorized",
            ModelError::Http { .. } => "http_status",
            ModelError::Timeout { .. } => "timeout",
            ModelError::Stream { .. } => "stream",
            ModelError::Cut { .. } => "cut_off",
            ModelError::ContextTooLong { .. } => "context_too_long",
            ModelError::Script { .. } => "script",
        }
    }

    /// The error with every occurrence of `secret` replaced by `REDACTED`. An endpoint may
    /// quote the request, `Authorization` header included, in an error body or event (some
    /// gateways and debugging proxies do); that text reaches the console, the logs and the
    /// event stream, so the key is taken out first.
    pub fn redact(self, secret: &str) -> Self {
        if secret.is_empty() {
            return self;
        }
        let scrub = |text: String| redact(&text, secret);
        match self {
            Self::Unreachable { url, detail } => Self::Unreachable { url: scrub(url), detail: scrub(detail) },
            Self::Http { status, attempts, body } => Self::Http { status, attempts, body: scrub(body) },
            Self::Stream { detail } => Self::Stream { detail: scrub(detail) },
            Self::Cut { detail, partial } => Self::Cut { detail: scrub(detail), partial },
            Self::ContextTooLong { status, body } => Self::ContextTooLong { status, body: scrub(body) },
            other @ (Self::Unauthorized { .. } | Self::Timeout { .. } | Self::Script { .. }) => other,
        }
    }

    /// What to say of a reply this error cut off, after part of it was shown: a broken
    /// stream's own detail, else the whole text.
    pub fn into_cut_detail(self) -> String {
        match self {
            Self::Stream { detail } => detail,
            other => other.to_string(),
        }
    }
}

/// What a redirect answer says: where it points (redacted), and that `base_url` is to be
/// corrected, since a POST that moved is not chased.
pub fn redirect_text(location: Option<&str>) -> String {
    match location {
        Some(location) => {
            let location = redact_url(location);
            format!("the endpoint redirects to {location}; set `[model] base_url` to it")
        }
        None => "the endpoint redirects without saying where".to_owned(),
    }
}

/// `text` with every occurrence of `secret` (when not empty) replaced by [`REDACTED`].
pub fn redact(text: &str, secret: &str) -> String {
    if secret.is_empty() { text.to_owned() } else { text.replace(secret, REDACTED) }
}

/// `url` fit to print: userinfo (`user:password@`) and the query string, which may carry
/// credentials (`?api_key=`), replaced by [`REDACTED`]; the fragment dropped. Works on the
/// text, so a URL that does not parse is redacted too.
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("{REDACTED}@{host}"),
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, _)) => format!("{path}?{REDACTED}"),
        None => tail.to_owned(),
    };
    match scheme {
        Some(scheme) => format!("{scheme}://{authority}{tail}"),
        None => format!("{authority}{tail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_userinfo_query_and_fragment() {
        assert_eq!(
            redact_url("http://user:pass@127.0.0.1:1/v1?key=sk-1/chat/completions"),
            "http://[redacted]@127.0.0.1:1/v1?[redacted]"
        );
        assert_eq!(redact_url("https://a:b@c@host/v1#frag"), "https://[redacted]@host/v1");
        assert_eq!(redact_url("http://host?api_key=x"), "http://host?[redacted]");
        assert_eq!(
            redact_url("http://127.0.0.1:9/v1/chat/completions"),
            "http://127.0.0.1:9/v1/chat/completions"
        );
        assert_eq!(redact_url("user:pw@host/x?y"), "[redacted]@host/x?[redacted]");
    }

    #[test]
    fn redact_takes_the_secret_out_of_text_the_endpoint_sent() {
        let echoed =
            ModelError::Http { status: 500, attempts: 3, body: "you sent: Bearer sk-42 (sk-42)".into() };
        assert_eq!(
            echoed.redact("sk-42").to_string(),
            "the model endpoint answered HTTP 500 after 3 attempt(s): you sent: Bearer [redacted] ([redacted])"
        );
        let stream = ModelError::Stream { detail: "the endpoint sent an error: key sk-42".into() };
        assert!(!stream.redact("sk-42").to_string().contains("sk-42"));
        let untouched = ModelError::Stream { detail: "nothing secret".into() };
        assert_eq!(
            untouched.redact("").to_string(),
            "the model's reply broke off or could not be read: nothing secret"
        );
    }
}
