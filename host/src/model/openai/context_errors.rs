//! Recognising an endpoint's refusal of a request longer than the model's context window.
//! Each server words it its own way, and none with a code every other one shares; the texts
//! below are the ones they send (the fixtures in `tests/fixtures/openai/` hold whole bodies).
//! Such a request fails the same way however often it is sent, so it is never retried: the
//! caller has to make it shorter.

/// Phrases, lowercase, that only a context-length refusal uses.
const PHRASES: &[&str] = &[
    // OpenAI: `"code": "context_length_exceeded"`, "This model's maximum context length is …";
    // vLLM and SGLang word it the same.
    "context_length_exceeded",
    "maximum context length",
    // SGLang: "… is longer than the model's context length (… tokens)".
    "model's context length",
    // llama.cpp's server: "the request exceeds the available context size, try increasing
    // it", `"type": "exceed_context_size_error"`.
    "exceeds the available context size",
    "exceed_context_size_error",
    // LiteLLM's proxy names its exception class.
    "contextwindowexceedederror",
    // Text Generation Inference: "`inputs` tokens + `max_new_tokens` must be <= …".
    "`inputs` tokens + `max_new_tokens`",
];

/// Whether an error response (`status`, `body`) says the request is too long for the model's
/// context window. Rate limits (429) are never that, even when they count tokens.
pub fn is_context_too_long(status: u16, body: &str) -> bool {
    if status == 429 || !(400..600).contains(&status) {
        return false;
    }
    let body = body.to_lowercase();
    PHRASES.iter().any(|phrase| body.contains(phrase)) || llama_cpp_context_size(&body)
}

/// llama.cpp's older servers: "input is larger than the max context size" and the like; the
/// words "context size" with "exceed" or "larger" near them.
fn llama_cpp_context_size(body: &str) -> bool {
    body.contains("context size") && (body.contains("exceed") || body.contains("larger"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_servers_wording_is_recognised() {
        for body in [
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}}"#,
            r#"{"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (2000 in the messages, 100 in the completion).","type":"BadRequestError","param":null,"code":400}"#,
            r#"{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: OpenAIException - prompt too long","type":null,"param":null,"code":"400"}}"#,
        ] {
            assert!(is_context_too_long(400, body), "{body}");
        }
    }

    #[test]
    fn other_refusals_and_rate_limits_are_not() {
        assert!(!is_context_too_long(400, r#"{"error":{"message":"Unsupported parameter: 'max_tokens'"}}"#));
        assert!(!is_context_too_long(429, "Rate limit reached: maximum context length of tokens per min"));
        assert!(!is_context_too_long(200, "maximum context length"));
        assert!(!is_context_too_long(500, "the context size is 4096"), "a mention is not a refusal");
    }
}
