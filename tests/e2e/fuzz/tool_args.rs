//! Tool-call argument validation: random JSON, some of it shaped by the stock plugins' own
//! schemas (as the model is sent them), goes through the real host's validation. The host
//! never panics; a call that misses the schema is refused with the schema error and where
//! it is (`at /todos/0/status`, or the property named); a call that fits passes validation
//! and reaches the policy, which here refuses everything so no tool runs.

use agent_host::tools::ToolResult;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::support::{FakeModel, Reply, TestHost, plugin_block};

/// Every stock plugin that offers tools, behind a permissions plugin that denies all calls.
async fn stock_host(model: &FakeModel, workspace: &std::path::Path) -> TestHost {
    let grant = format!(
        "[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}\n",
        workspace.display()
    );
    let plugins = [
        plugin_block("todo", ""),
        plugin_block("todo-write", ""),
        plugin_block("agent-mode", ""),
        plugin_block("fs", &grant),
        plugin_block("shell", &format!("[plugin.grants]\nprocess = true\n{grant}")),
        plugin_block("permissions", "[plugin.config]\ndefault = \"deny\"\n"),
    ]
    .concat();
    TestHost::with_plugins(model, &plugins).await
}

/// A deterministic source of choices for schema-shaped values (splitmix64).
struct Choices(u64);

impl Choices {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn string(&mut self) -> String {
        const ODD: [&str; 10] =
            ["", " ", "a", "pending", "in_progress", "é😀", "\u{0}", "../x", "\u{202e}rtl", "{}"];
        let mut text = String::new();
        for _ in 0..self.below(3) {
            text.push_str(ODD[self.below(ODD.len() as u64) as usize]);
        }
        text
    }
    /// Any JSON value, nested up to `depth`.
    fn any(&mut self, depth: u32) -> Value {
        match self.below(if depth == 0 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => json!(self.below(2) == 0),
            2 => json!(self.next() as i64),
            3 => json!(f64::from(self.below(1000) as u32) / 7.0),
            4 => json!(self.string()),
            5 => Value::Array((0..self.below(4)).map(|_| self.any(depth - 1)).collect()),
            _ => {
                let mut map = Map::new();
                for _ in 0..self.below(4) {
                    let key = self.string();
                    map.insert(key, self.any(depth - 1));
                }
                Value::Object(map)
            }
        }
    }
    /// A value shaped by `schema`: mostly the right types and keys, sometimes not.
    fn shaped(&mut self, schema: &Value, depth: u32) -> Value {
        if self.below(8) == 0 || depth == 0 {
            return self.any(depth.min(2));
        }
        if let Some(options) = schema["enum"].as_array()
            && self.below(4) != 0
            && !options.is_empty()
        {
            return options[self.below(options.len() as u64) as usize].clone();
        }
        match schema["type"].as_str() {
            Some("object") => {
                let mut map = Map::new();
                if let Some(properties) = schema["properties"].as_object() {
                    for (key, property) in properties {
                        if self.below(6) != 0 {
                            map.insert(key.clone(), self.shaped(property, depth - 1));
                        }
                    }
                }
                if self.below(6) == 0 {
                    map.insert(self.string() + "extra", self.any(1));
                }
                Value::Object(map)
            }
            Some("array") => {
                Value::Array((0..self.below(5)).map(|_| self.shaped(&schema["items"], depth - 1)).collect())
            }
            Some("string") => json!(self.string()),
            Some("integer") => json!(self.next() as i64 % 100),
            Some("number") => json!(self.below(100) as f64 / 3.0),
            Some("boolean") => json!(self.below(2) == 0),
            _ => self.any(2),
        }
    }
}

/// `depth` arrays inside each other: deeper than serde_json's recursion limit.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, _| json!([inner]))
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The property for one call of `tool` with `arguments`.
fn check(
    tool: &str,
    validator: &jsonschema::Validator,
    arguments: &Value,
    result: &ToolResult,
) -> Result<(), TestCaseError> {
    prop_assert!(!result.ok, "the deny-all policy let `{}` run: {}", tool, result.output);
    if depth(arguments) > 128 {
        // Deeper than the JSON parser goes: refused as such, before the schema is read.
        prop_assert!(result.output.contains("recursion limit exceeded"), "{}", result.output);
        return Ok(());
    }
    let errors: Vec<_> = validator.iter_errors(arguments).collect();
    if errors.is_empty() {
        prop_assert!(
            result.output.contains("the call was refused by"),
            "valid arguments for `{}` did not reach the policy: {}\n{}",
            tool,
            result.output,
            arguments
        );
        return Ok(());
    }
    prop_assert!(
        result.output.contains(&format!("the arguments for `{tool}` do not match its schema")),
        "{}",
        result.output
    );
    let first = &errors[0];
    let path = first.instance_path().to_string();
    if path.is_empty() {
        // At the top level the message itself names the property, or says the arguments
        // are not an object at all.
        let named = first.to_string();
        prop_assert!(result.output.contains(&named), "{} lacks {}", result.output, named);
    } else {
        prop_assert!(
            result.output.contains(&format!("at {path}: ")),
            "{} lacks the path {}",
            result.output,
            path
        );
    }
    Ok(())
}

#[test]
fn random_arguments_are_validated_and_refusals_name_the_field() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let model = runtime.block_on(FakeModel::start());
    let test = runtime.block_on(stock_host(&model, workspace.path()));
    let session = test.session();
    // The tools and schemas exactly as the model is sent them.
    model.push(Reply::text("ok"));
    runtime.block_on(test.turn(&session, "hi")).unwrap();
    let tools: Vec<(String, Value)> = model.requests()[0]["tools"]
        .as_array()
        .expect("tools are offered")
        .iter()
        .map(|tool| {
            (tool["function"]["name"].as_str().unwrap().to_owned(), tool["function"]["parameters"].clone())
        })
        .collect();
    assert!(tools.len() >= 12, "every stock tool is offered: {tools:?}");
    let validators: Vec<jsonschema::Validator> =
        tools.iter().map(|(_, schema)| jsonschema::validator_for(schema).unwrap()).collect();

    let mut runner = super::runner(150);
    let strategy = (any::<prop::sample::Index>(), any::<u64>(), 0u8..10);
    let fitted = std::cell::Cell::new(0u32);
    runner
        .run(&strategy, |(tool, seed, shape)| {
            let index = tool.index(tools.len());
            let (name, schema) = &tools[index];
            let mut choices = Choices(seed);
            let arguments = match shape {
                0 => choices.any(4),
                1 => nested(200 + choices.below(100) as usize),
                _ => choices.shaped(schema, 5),
            };
            let result = runtime.block_on(async {
                let mut locked = session.lock().await;
                test.host.invoke_tool(&mut locked, name, &arguments, &*test.events).await
            });
            let result = result.map_err(|error| TestCaseError::fail(format!("{name}: {error}")))?;
            test.take_events();
            if validators[index].is_valid(&arguments) {
                fitted.set(fitted.get() + 1);
            }
            check(name, &validators[index], &arguments, &result)
        })
        .unwrap();
    super::report("tool arguments", &runner);
    println!("fuzz tool arguments: {} cases fitted their schema and reached the policy", fitted.get());
}
