//! `[model] extra_body`: provider-specific options (vLLM's `top_k`, llama.cpp's
//! `cache_prompt`, OpenRouter's `provider`, `max_completion_tokens`, …) merged into the top
//! level of every request body. Converted from TOML once, when the client is built.

use serde_json::{Map, Value};

/// Keys that would replace the request itself rather than tune it.
const RESERVED: [&str; 4] = ["model", "messages", "stream", "tools"];

/// `table` as the JSON object to merge; an error names a key the host must set itself.
pub fn from_table(table: &toml::Table) -> anyhow::Result<Map<String, Value>> {
    if let Some(key) = RESERVED.iter().find(|key| table.contains_key(**key)) {
        anyhow::bail!(
            "`[model] extra_body.{key}` would replace the request's own `{key}`, which the host \
             sets; remove it (`[model] model` names the model)"
        );
    }
    Ok(table.iter().map(|(key, value)| (key.clone(), json_of(value))).collect())
}

fn json_of(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(text) => Value::from(text.as_str()),
        toml::Value::Integer(number) => Value::from(*number),
        toml::Value::Float(number) => {
            serde_json::Number::from_f64(*number).map_or(Value::Null, Value::Number)
        }
        toml::Value::Boolean(flag) => Value::from(*flag),
        // JSON has no dates: the TOML text of it, as RFC 3339 gives it.
        toml::Value::Datetime(datetime) => Value::from(datetime.to_string()),
        toml::Value::Array(items) => items.iter().map(json_of).collect(),
        toml::Value::Table(table) => {
            Value::Object(table.iter().map(|(key, value)| (key.clone(), json_of(value))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn toml_becomes_the_json_it_says() {
        let table: toml::Table = toml::from_str(
            "top_k = 20\ncache_prompt = true\nmin_p = 0.05\nstop = [\"</s>\"]\nprovider = { order = [\"a\"] }\nsince = 1979-05-27",
        )
        .unwrap();
        assert_eq!(
            Value::Object(from_table(&table).unwrap()),
            json!({"top_k": 20, "cache_prompt": true, "min_p": 0.05, "stop": ["</s>"],
                   "provider": {"order": ["a"]}, "since": "1979-05-27"})
        );
    }

    #[test]
    fn a_key_that_would_replace_the_request_is_refused_by_name() {
        let table: toml::Table = toml::from_str("messages = []").unwrap();
        let error = from_table(&table).unwrap_err().to_string();
        assert!(error.contains("`[model] extra_body.messages`"), "{error}");
    }
}
