//! Tools, each declared once by its typed argument struct: the SDK derives the JSON Schema
//! the model sees and parses every call into the struct before the handler runs.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::Context;
use crate::bindings::agent_host::plugin::types::{ToolCall, ToolSpec};

/// The arguments of a tool that takes none: an empty object.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

type Handler<C> = Box<dyn Fn(&Context<C>, &ToolCall) -> Result<String, String>>;

/// One tool a plugin offers: name, description, whether it changes things, and the typed
/// handler that runs its calls.
pub struct Tool<C> {
    pub(crate) name: &'static str,
    description: Description<C>,
    mutates: Mutates<C>,
    schema: fn() -> String,
    run: Handler<C>,
}

enum Description<C> {
    Fixed(&'static str),
    FromConfig(fn(&C) -> String),
}

enum Mutates<C> {
    Fixed(bool),
    When(fn(&Context<C>) -> bool),
}

impl<C: 'static> Tool<C> {
    /// A tool whose calls `run` answers with the arguments parsed into `A`. `A`'s JSON
    /// Schema (field doc comments become the model's descriptions) is what the host checks
    /// every call against. Read-only unless marked [`mutating`](Self::mutating).
    pub fn new<A, F>(name: &'static str, description: &'static str, run: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        F: Fn(&Context<C>, A) -> Result<String, String> + 'static,
    {
        Self {
            name,
            description: Description::Fixed(description),
            mutates: Mutates::Fixed(false),
            schema: schema_of::<A>,
            run: Box::new(move |ctx, call| {
                let args = serde_json::from_str(&call.arguments)
                    .map_err(|error| format!("invalid arguments for `{}`: {error}", call.name))?;
                run(ctx, args)
            }),
        }
    }

    /// The description, written from the configuration (a limit it names, say).
    pub fn described_by(mut self, describe: fn(&C) -> String) -> Self {
        self.description = Description::FromConfig(describe);
        self
    }

    /// Marks the tool as one that changes things outside the agent's own bookkeeping.
    pub fn mutating(mut self) -> Self {
        self.mutates = Mutates::Fixed(true);
        self
    }

    /// Marks the tool as changing things whenever `when` says so; `when` may read only the
    /// configuration and state, as `provide` may (the contribution is reused). Such a tool
    /// is returned by `provide` on every call instead of being declared once at load.
    pub fn mutating_when(mut self, when: fn(&Context<C>) -> bool) -> Self {
        self.mutates = Mutates::When(when);
        self
    }

    /// The spec under `config`, when nothing in it depends on state: such a tool is
    /// declared once, from `configure`, and its schema derived once per load.
    pub(crate) fn declared_spec(&self, config: &C) -> Option<ToolSpec> {
        match self.mutates {
            Mutates::Fixed(mutates) => Some(self.spec_with(config, mutates)),
            Mutates::When(_) => None,
        }
    }

    /// The spec for this call, when it depends on state (it is returned by `provide`).
    pub(crate) fn provided_spec(&self, ctx: &Context<C>) -> Option<ToolSpec> {
        match self.mutates {
            Mutates::Fixed(_) => None,
            Mutates::When(when) => Some(self.spec_with(&ctx.config, when(ctx))),
        }
    }

    fn spec_with(&self, config: &C, mutates: bool) -> ToolSpec {
        ToolSpec {
            name: self.name.to_owned(),
            description: match &self.description {
                Description::Fixed(text) => (*text).to_owned(),
                Description::FromConfig(describe) => describe(config),
            },
            parameters: (self.schema)(),
            mutates,
        }
    }

    /// Whether its spec depends on state, so that `provide` must return it.
    pub(crate) fn is_provided(&self) -> bool {
        matches!(self.mutates, Mutates::When(_))
    }

    pub(crate) fn call(&self, ctx: &Context<C>, call: &ToolCall) -> Result<String, String> {
        (self.run)(ctx, call)
    }
}

/// `A`'s JSON Schema as the host wants it: one self-contained object schema, with no
/// `$schema`, title or type-level doc text (those are for the plugin's authors).
pub fn schema_of<A: JsonSchema>() -> String {
    let mut settings = SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings.inline_subschemas = true;
    let mut schema = settings.into_generator().into_root_schema_for::<A>();
    schema.remove("title");
    schema.remove("description");
    serde_json::to_string(&schema).expect("a JSON Schema always serializes")
}

/// Typed access to a tool call's arguments, for hooks that look at other plugins' calls.
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
