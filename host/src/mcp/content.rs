//! What the model is shown of an MCP tool's result: its text, its structured content as
//! JSON, and a line naming each image, audio clip or resource, which are not inlined.

use serde_json::Value;

use crate::tools::{ToolResult, cap_text};

/// `result` as the model gets it, cut to `max_bytes`; an `isError` result is a failed call.
pub(super) fn tool_result(result: &rmcp::model::CallToolResult, max_bytes: usize) -> ToolResult {
    let blocks: Vec<Value> =
        result.content.iter().filter_map(|block| serde_json::to_value(block).ok()).collect();
    let mut parts: Vec<String> = Vec::new();
    match &result.structured_content {
        // Servers also send structured content as a text block, for older clients; the
        // JSON itself is what is meant, so it is shown once, in place of that text.
        Some(structured) => parts.push(structured.to_string()),
        None => parts.extend(blocks.iter().filter_map(|block| text_of(block).map(str::to_owned))),
    }
    parts.extend(blocks.iter().filter_map(not_inlined));
    let mut output = parts.join("\n");
    cap_text(&mut output, max_bytes);
    ToolResult { ok: result.is_error != Some(true), output }
}

fn text_of(block: &Value) -> Option<&str> {
    (block["type"] == "text").then(|| block["text"].as_str()).flatten()
}

/// A line naming a block that is not text, saying that it is not shown.
fn not_inlined(block: &Value) -> Option<String> {
    let mime = |value: &Value| value["mimeType"].as_str().unwrap_or("unknown type").to_owned();
    let size = |data: &Value| data.as_str().map_or(0, |data| data.len() / 4 * 3);
    match block["type"].as_str()? {
        "text" => None,
        kind @ ("image" | "audio") => Some(format!(
            "[{kind} ({}, about {} bytes): not shown to the model]",
            mime(block),
            size(&block["data"])
        )),
        "resource" => {
            let resource = &block["resource"];
            Some(format!(
                "[resource {} ({}): not inlined]",
                resource["uri"].as_str().unwrap_or("without a URI"),
                mime(resource)
            ))
        }
        "resource_link" => Some(format!(
            "[resource link {} ({}): not fetched]",
            block["uri"].as_str().unwrap_or("without a URI"),
            block["name"].as_str().unwrap_or("unnamed")
        )),
        other => Some(format!("[{other} content: not shown to the model]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(value: Value) -> rmcp::model::CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn text_is_joined_and_an_image_is_named_not_inlined() {
        let result = result(serde_json::json!({ "content": [
            { "type": "text", "text": "before" },
            { "type": "image", "data": "AAAA", "mimeType": "image/png" },
            { "type": "text", "text": "after" },
        ]}));
        let shown = tool_result(&result, 1 << 20);
        assert!(shown.ok);
        assert_eq!(shown.output, "before\nafter\n[image (image/png, about 3 bytes): not shown to the model]");
    }

    #[test]
    fn structured_content_is_shown_once_as_json_and_is_error_fails_the_call() {
        let result = result(serde_json::json!({
            "content": [{ "type": "text", "text": "{\"t\": 1}" }],
            "structuredContent": { "t": 1 },
            "isError": true,
        }));
        let shown = tool_result(&result, 1 << 20);
        assert!(!shown.ok);
        assert_eq!(shown.output, r#"{"t":1}"#);
    }

    #[test]
    fn a_long_result_is_cut_and_says_so() {
        let result = result(serde_json::json!({ "content": [{ "type": "text", "text": "x".repeat(100) }] }));
        let shown = tool_result(&result, 10);
        assert!(
            shown.output.starts_with("xxxxxxxxxx\n[output cut: 10 of 100 bytes shown]"),
            "{}",
            shown.output
        );
    }
}
