//! What a plugin declares from `configure` through its imports (`hook-filter`, `tools`):
//! facts that hold for as long as the configuration they were derived from, recorded while
//! `configure` runs and kept with the load.

/// The most tools one plugin may declare.
pub const MAX_DECLARED_TOOLS: usize = 256;
/// The most text (names, descriptions, schemas) one plugin's declared tools may hold.
pub const MAX_DECLARED_TOOL_BYTES: usize = 1 << 20;

/// Everything one `configure` call declared.
#[derive(Debug, Default)]
pub struct Declarations {
    pub hook_filters: Vec<HookDeclaration>,
    pub tools: Vec<ToolSpec>,
    /// Bytes of text the declared tools hold, against [`MAX_DECLARED_TOOL_BYTES`].
    tool_bytes: usize,
}

impl Declarations {
    /// Keeps a declared tool, or says which bound it would break: declarations are held by
    /// the host for the whole load, so they are bounded like everything else a call hands it.
    pub fn declare_tool(&mut self, tool: ToolSpec) -> Result<(), String> {
        if self.tools.len() == MAX_DECLARED_TOOLS {
            return Err(format!("declared more than {MAX_DECLARED_TOOLS} tools"));
        }
        let bytes = tool.name.len() + tool.description.len() + tool.parameters.len();
        if self.tool_bytes + bytes > MAX_DECLARED_TOOL_BYTES {
            return Err(format!(
                "declared tools of more than {} KiB of text in all (at `{}`)",
                MAX_DECLARED_TOOL_BYTES >> 10,
                tool.name
            ));
        }
        self.tool_bytes += bytes;
        self.tools.push(tool);
        Ok(())
    }
}

/// A tool a plugin offers to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema for the arguments object, as text.
    pub parameters: String,
    /// Whether the tool changes something outside the agent's own bookkeeping.
    pub mutates: bool,
}

/// Which tool hook a `hook-filter` declaration is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolHook {
    PreToolUse,
    PostToolUse,
}

/// The tool calls a hook asked to see (`hook-filter.only`), as declared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    pub mutating_only: bool,
    pub tools: Vec<String>,
    pub except_tools: Vec<String>,
    pub output_longer_than: Option<u32>,
}

/// One `hook-filter` declaration: `only` with its filter, or `never`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookDeclaration {
    Only(ToolHook, ToolFilter),
    Never(ToolHook),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, schema_bytes: usize) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            description: String::new(),
            parameters: "x".repeat(schema_bytes),
            mutates: false,
        }
    }

    #[test]
    fn the_257th_tool_is_refused_naming_the_bound() {
        let mut declared = Declarations::default();
        for n in 0..256 {
            declared.declare_tool(tool(&format!("t{n}"), 10)).unwrap();
        }
        let error = declared.declare_tool(tool("one_more", 10)).unwrap_err();
        assert_eq!(error, "declared more than 256 tools");
        assert_eq!(declared.tools.len(), 256);
    }

    #[test]
    fn text_past_one_mebibyte_in_all_is_refused_naming_the_tool() {
        let mut declared = Declarations::default();
        declared.declare_tool(tool("big", 1_000_000)).unwrap();
        declared.declare_tool(tool("fits", 40_000)).unwrap();
        let error = declared.declare_tool(tool("over", 10_000)).unwrap_err();
        assert!(error.contains("1024 KiB") && error.contains("`over`"), "{error}");
        assert_eq!(declared.tools.len(), 2);
    }
}
