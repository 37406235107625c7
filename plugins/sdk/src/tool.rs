use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::bindings::agent_host::plugin::types::{ToolCall, ToolSpec};

/// Builders for tool specs.
pub trait ToolSpecExt {
    /// A read-only tool with an empty argument object.
    fn new(name: &str, description: &str) -> Self;
    /// Sets the JSON Schema of the arguments object.
    fn parameters(self, schema: Value) -> Self;
    /// Sets the JSON Schema of the arguments object from JSON text, as written: for a
    /// fixed schema, nothing to build or serialize on every `provide` (the host checks
    /// that it is JSON).
    fn parameters_json(self, schema: &str) -> Self;
    /// Marks the tool as one that changes the world (files, processes, network).
    fn mutating(self) -> Self;
}

impl ToolSpecExt for ToolSpec {
    fn new(name: &str, description: &str) -> Self {
        ToolSpec {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters: r#"{"type":"object","properties":{},"additionalProperties":false}"#.to_owned(),
            mutates: false,
        }
    }

    fn parameters(mut self, schema: Value) -> Self {
        // `to_string` would go through `Display` and a formatter per token: several times
        // slower, and `provide` runs before every model call.
        self.parameters = serde_json::to_string(&schema).expect("a JSON value always serializes");
        self
    }

    fn parameters_json(mut self, schema: &str) -> Self {
        self.parameters = schema.to_owned();
        self
    }

    fn mutating(mut self) -> Self {
        self.mutates = true;
        self
    }
}

/// Typed access to a tool call's arguments.
pub trait ToolArgs {
    /// Deserializes the arguments object into `T`; the error text suits the model.
    fn args<T: DeserializeOwned>(&self) -> Result<T, String>;
}

impl ToolArgs for ToolCall {
    fn args<T: DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_str(&self.arguments)
            .map_err(|error| format!("invalid arguments for `{}`: {error}", self.name))
    }
}
