//! The request checks the Messages API makes, as its documentation and its error messages
//! describe them: a request that would be refused there is refused here, with a message
//! in the same words, so a test against the fake fails where the real endpoint would.

use serde_json::{Map, Value};

/// Top-level fields the API takes; anything else is refused ("Extra inputs are not
/// permitted").
const FIELDS: [&str; 15] = [
    "model",
    "messages",
    "max_tokens",
    "system",
    "tools",
    "tool_choice",
    "stream",
    "temperature",
    "top_k",
    "top_p",
    "stop_sequences",
    "metadata",
    "thinking",
    "service_tier",
    "container",
];

/// Blocks with `cache_control` one request may have.
const MAX_BREAKPOINTS: usize = 4;

/// Why a request was refused: the message an `invalid_request_error` would carry.
pub type Refusal = String;

/// Checks a request body; `Ok` with it parsed when the API would take it.
pub fn check(body: &str) -> Result<Value, Refusal> {
    let request: Value = serde_json::from_str(body).map_err(|error| format!("invalid JSON: {error}"))?;
    let top = request.as_object().ok_or("the request body must be a JSON object")?;
    if let Some(extra) = top.keys().find(|key| !FIELDS.contains(&key.as_str())) {
        return Err(format!("{extra}: Extra inputs are not permitted"));
    }
    match top.get("model") {
        Some(Value::String(model)) if !model.is_empty() => {}
        _ => return Err("model: Field required".into()),
    }
    match top.get("max_tokens").and_then(Value::as_u64) {
        Some(tokens) if tokens >= 1 => {}
        _ => return Err("max_tokens: Field required".into()),
    }
    if top.get("stream") != Some(&Value::Bool(true)) {
        return Err("stream: this fake endpoint only answers streamed requests".into());
    }
    let mut breakpoints = 0;
    if let Some(system) = top.get("system") {
        breakpoints += check_system(system)?;
    }
    if let Some(tools) = top.get("tools") {
        breakpoints += check_tools(tools)?;
    }
    breakpoints += check_messages(top.get("messages"))?;
    if breakpoints > MAX_BREAKPOINTS {
        return Err(format!(
            "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}."
        ));
    }
    Ok(request)
}

/// The `cache_control` of a block: 1 when it has a valid one.
fn breakpoint(block: &Map<String, Value>, at: &str) -> Result<usize, Refusal> {
    match block.get("cache_control") {
        None => Ok(0),
        Some(control) if control["type"] == "ephemeral" => Ok(1),
        Some(_) => Err(format!("{at}.cache_control.type: Input should be 'ephemeral'")),
    }
}

fn check_system(system: &Value) -> Result<usize, Refusal> {
    match system {
        Value::String(_) => Ok(0),
        Value::Array(blocks) => {
            let mut breakpoints = 0;
            for (at, block) in blocks.iter().enumerate() {
                let at = format!("system.{at}");
                let block = block.as_object().ok_or(format!("{at}: Input should be an object"))?;
                if block.get("type").and_then(Value::as_str) != Some("text") {
                    return Err(format!("{at}.type: Input should be 'text'"));
                }
                check_text(block, &at)?;
                breakpoints += breakpoint(block, &at)?;
            }
            Ok(breakpoints)
        }
        _ => Err("system: Input should be a valid string or a list of text blocks".into()),
    }
}

fn check_tools(tools: &Value) -> Result<usize, Refusal> {
    let tools = tools.as_array().ok_or("tools: Input should be a valid list")?;
    let mut breakpoints = 0;
    for (at, tool) in tools.iter().enumerate() {
        let at = format!("tools.{at}");
        let tool = tool.as_object().ok_or(format!("{at}: Input should be an object"))?;
        if let Some(extra) = tool
            .keys()
            .find(|key| !["name", "description", "input_schema", "cache_control"].contains(&key.as_str()))
        {
            return Err(format!("{at}.custom.{extra}: Extra inputs are not permitted"));
        }
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let valid_name = (1..=64).contains(&name.len())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(format!("{at}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"));
        }
        match tool.get("input_schema") {
            Some(schema) if schema["type"] == "object" => {}
            Some(_) => return Err(format!("{at}.custom.input_schema.type: Input should be 'object'")),
            None => return Err(format!("{at}.custom.input_schema: Field required")),
        }
        breakpoints += breakpoint(tool, &at)?;
    }
    Ok(breakpoints)
}

fn check_text(block: &Map<String, Value>, at: &str) -> Result<(), Refusal> {
    match block.get("text").and_then(Value::as_str) {
        Some(text) if !text.trim().is_empty() => Ok(()),
        Some(_) => Err(format!("{at}: text content blocks must contain non-whitespace text")),
        None => Err(format!("{at}.text: Field required")),
    }
}

fn check_id(id: Option<&Value>, at: &str) -> Result<String, Refusal> {
    let id = id.and_then(Value::as_str).unwrap_or_default();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(format!("{at}: String should match pattern '^[a-zA-Z0-9_-]+$'"));
    }
    Ok(id.to_owned())
}

/// Roles that alternate from the user; content blocks of the kinds each role may send;
/// every `tool_use` answered by a `tool_result` at the start of the next message, in order.
fn check_messages(messages: Option<&Value>) -> Result<usize, Refusal> {
    let messages = messages.and_then(Value::as_array).ok_or("messages: Field required")?;
    if messages.is_empty() {
        return Err("messages: at least one message is required".into());
    }
    let mut breakpoints = 0;
    // The `tool_use` ids of the message before, which this one must answer.
    let mut unanswered: Vec<String> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        let at = format!("messages.{index}");
        let role = message["role"].as_str().unwrap_or_default();
        let expected = if index % 2 == 0 { "user" } else { "assistant" };
        if role != "user" && role != "assistant" {
            return Err(format!(
                "{at}.role: Input should be 'user' or 'assistant' (a system prompt goes in the top-level `system` field)"
            ));
        }
        if role != expected {
            return Err(format!(
                "{at}: roles must alternate between \"user\" and \"assistant\", starting with \"user\"; this one is \"{role}\""
            ));
        }
        let blocks = match &message["content"] {
            Value::String(text) if !text.trim().is_empty() => Vec::new(),
            Value::String(_) => {
                return Err(format!("{at}: text content blocks must contain non-whitespace text"));
            }
            Value::Array(blocks) if !blocks.is_empty() => blocks.clone(),
            _ => return Err(format!("{at}: all messages must have non-empty content")),
        };
        let mut results = Vec::new();
        let mut uses = Vec::new();
        let mut after_other = false;
        for (position, block) in blocks.iter().enumerate() {
            let at = format!("{at}.content.{position}");
            let block = block.as_object().ok_or(format!("{at}: Input should be an object"))?;
            breakpoints += breakpoint(block, &at)?;
            match (block.get("type").and_then(Value::as_str), role) {
                (Some("text"), _) => {
                    check_text(block, &at)?;
                    after_other = true;
                }
                (Some("tool_use"), "assistant") => {
                    uses.push(check_id(block.get("id"), &format!("{at}.id"))?);
                    if !block.get("input").is_some_and(Value::is_object) {
                        return Err(format!("{at}.input: Input should be a valid dictionary"));
                    }
                    if block.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
                        return Err(format!("{at}.name: Field required"));
                    }
                }
                (Some("tool_result"), "user") => {
                    if after_other {
                        return Err(format!(
                            "{at}: tool_result blocks must come first in the user message content, before any text"
                        ));
                    }
                    results.push(check_id(block.get("tool_use_id"), &format!("{at}.tool_use_id"))?);
                    if !matches!(block.get("content"), None | Some(Value::String(_) | Value::Array(_))) {
                        return Err(format!("{at}.content: Input should be a valid string or list"));
                    }
                }
                (kind, role) => {
                    return Err(format!("{at}.type: a {role} message cannot carry a block of type {kind:?}"));
                }
            }
        }
        if let Some(stray) = results.iter().find(|id| !unanswered.contains(id)) {
            return Err(format!(
                "{at}: unexpected `tool_use_id` found in `tool_result` blocks: {stray}. Each `tool_result` block must \
                 have a corresponding `tool_use` block in the previous message."
            ));
        }
        if results != unanswered {
            let missing: Vec<&str> =
                unanswered.iter().filter(|id| !results.contains(id)).map(String::as_str).collect();
            if !missing.is_empty() {
                return Err(format!(
                    "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each \
                     `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    index - 1,
                    missing.join(", ")
                ));
            }
            return Err(format!(
                "{at}: the `tool_result` blocks must answer the `tool_use` blocks in their order"
            ));
        }
        unanswered = uses;
    }
    if !unanswered.is_empty() {
        return Err(format!(
            "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}",
            messages.len() - 1,
            unanswered.join(", ")
        ));
    }
    Ok(breakpoints)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(messages: Value) -> String {
        json!({"model": "m", "max_tokens": 10, "stream": true, "messages": messages}).to_string()
    }

    #[test]
    fn what_the_api_refuses_is_refused() {
        let use_a = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "t", "input": {}}]});
        let cases = [
            (request(json!([{"role": "system", "content": "x"}])), "role"),
            (request(json!([{"role": "assistant", "content": "x"}])), "starting with \"user\""),
            (request(json!([{"role": "user", "content": "x"}, {"role": "user", "content": "y"}])), "alternate"),
            (request(json!([{"role": "user", "content": [{"type": "text", "text": " "}]}])), "non-whitespace"),
            (request(json!([{"role": "user", "content": "go"}, use_a.clone()])), "without `tool_result`"),
            (
                request(json!([{"role": "user", "content": "go"}, use_a.clone(),
                    {"role": "user", "content": [{"type": "text", "text": "hm"}]}])),
                "without `tool_result`",
            ),
            (
                request(json!([{"role": "user", "content": "go"}, use_a.clone(),
                    {"role": "user", "content": [{"type": "text", "text": "hm"}, {"type": "tool_result", "tool_use_id": "a"}]}])),
                "must come first",
            ),
            (
                request(json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz"}]}])),
                "unexpected `tool_use_id`",
            ),
            (
                request(json!([{"role": "user", "content": "go"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "t", "input": "{}"}]}])),
                "valid dictionary",
            ),
            (json!({"model": "m", "stream": true, "messages": []}).to_string(), "max_tokens"),
            (json!({"model": "m", "max_tokens": 5, "stream": true, "messages": [], "parameters": 1}).to_string(), "Extra inputs"),
            (
                json!({"model": "m", "max_tokens": 5, "stream": true, "tools": [{"name": "t", "parameters": {}}],
                    "messages": [{"role": "user", "content": "x"}]})
                .to_string(),
                "Extra inputs",
            ),
        ];
        for (body, expected) in cases {
            let refusal = check(&body).expect_err(&body);
            assert!(refusal.contains(expected), "{refusal} for {body}");
        }
    }

    #[test]
    fn a_well_formed_conversation_with_tools_is_taken() {
        let body = json!({
            "model": "m", "max_tokens": 10, "stream": true,
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "t", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "text", "text": "ok"},
                    {"type": "tool_use", "id": "a", "name": "t", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "t", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"},
                    {"type": "tool_result", "tool_use_id": "b", "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": "note"}]},
            ],
        });
        check(&body.to_string()).unwrap();
    }
}
