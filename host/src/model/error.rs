/// Why a model call failed. None of these ever contains the API key.
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
    #[error("scripted model: {detail}")]
    Script { detail: String },
}
