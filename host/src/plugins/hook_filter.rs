//! Which tool calls a plugin's tool hooks see (the `hook-filter` import, since contract 0.1.2):
//! declared in `configure`, so it holds for exactly as long as that configuration, and
//! checked by the host before every `pre-tool-use` and `post-tool-use` call.

use wildmatch::WildMatch;

use super::types::ToolUse;
use crate::runtime::{HookDeclaration, ToolFilter, ToolHook};
use crate::tools::ToolResult;

/// The tool calls one hook is called for.
#[derive(Debug, Clone, Default)]
pub(super) enum Reach {
    /// Every call: what a plugin that declared nothing (or predates 0.1.2) gets.
    #[default]
    Every,
    Only(Filter),
    Never,
}

impl Reach {
    fn admits(&self, tool_use: &ToolUse, output: Option<&str>) -> bool {
        match self {
            Reach::Every => true,
            Reach::Never => false,
            Reach::Only(filter) => {
                let name = tool_use.call.name.as_str();
                let named = |patterns: &[WildMatch]| patterns.iter().any(|pattern| pattern.matches(name));
                (!filter.mutating_only || tool_use.mutates)
                    && (filter.tools.is_empty() || named(&filter.tools))
                    && !named(&filter.except_tools)
                    && match (filter.output_longer_than, output) {
                        (Some(bytes), Some(output)) => output.len() > bytes as usize,
                        _ => true,
                    }
            }
        }
    }
}

/// A declared [`ToolFilter`] with its name patterns compiled once, when it is declared,
/// rather than on every tool call.
#[derive(Debug, Clone)]
pub(super) struct Filter {
    mutating_only: bool,
    tools: Vec<WildMatch>,
    except_tools: Vec<WildMatch>,
    output_longer_than: Option<u32>,
}

impl From<ToolFilter> for Filter {
    fn from(filter: ToolFilter) -> Self {
        let compile =
            |patterns: Vec<String>| patterns.iter().map(|pattern| WildMatch::new(pattern)).collect();
        Self {
            mutating_only: filter.mutating_only,
            tools: compile(filter.tools),
            except_tools: compile(filter.except_tools),
            output_longer_than: filter.output_longer_than,
        }
    }
}

/// What a plugin declared for its two tool hooks.
#[derive(Debug, Clone, Default)]
pub struct HookFilters {
    pre_tool_use: Reach,
    post_tool_use: Reach,
}

impl HookFilters {
    /// The filters `declarations` (in the order `configure` made them) add up to.
    pub(super) fn from_declarations(declarations: Vec<HookDeclaration>) -> Self {
        let mut filters = Self::default();
        for declaration in declarations {
            match declaration {
                HookDeclaration::Only(hook, filter) => filters.declare(hook, Reach::Only(filter.into())),
                HookDeclaration::Never(hook) => filters.declare(hook, Reach::Never),
            }
        }
        filters
    }

    /// Records a declaration; a later one for the same hook replaces the earlier.
    pub(super) fn declare(&mut self, hook: ToolHook, reach: Reach) {
        match hook {
            ToolHook::PreToolUse => self.pre_tool_use = reach,
            ToolHook::PostToolUse => self.post_tool_use = reach,
        }
    }

    /// Whether `pre-tool-use` must be called for `tool_use`.
    pub fn pre_tool_use_sees(&self, tool_use: &ToolUse) -> bool {
        self.pre_tool_use.admits(tool_use, None)
    }

    /// Whether `post-tool-use` must be called for `tool_use` ending in `result`.
    pub fn post_tool_use_sees(&self, tool_use: &ToolUse, result: &ToolResult) -> bool {
        self.post_tool_use.admits(tool_use, Some(&result.output))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolCall;

    fn tool_use(name: &str, mutates: bool) -> ToolUse {
        ToolUse {
            call: ToolCall { id: "1".into(), name: name.into(), arguments: "{}".into() },
            plugin: "p".into(),
            mutates,
        }
    }

    fn result(output: &str) -> ToolResult {
        ToolResult { ok: true, output: output.into() }
    }

    fn filter(mutating_only: bool, tools: &[&str], output_longer_than: Option<u32>) -> ToolFilter {
        ToolFilter {
            mutating_only,
            tools: tools.iter().map(|t| t.to_string()).collect(),
            except_tools: Vec::new(),
            output_longer_than,
        }
    }

    #[test]
    fn without_a_declaration_every_call_is_seen() {
        let filters = HookFilters::default();
        assert!(filters.pre_tool_use_sees(&tool_use("read", false)));
        assert!(filters.post_tool_use_sees(&tool_use("read", false), &result("")));
    }

    #[test]
    fn a_call_must_pass_every_part_of_the_filter() {
        let mut filters = HookFilters::default();
        filters.declare(ToolHook::PreToolUse, Reach::Only(filter(true, &["write", "run"], None).into()));
        assert!(filters.pre_tool_use_sees(&tool_use("write", true)));
        assert!(!filters.pre_tool_use_sees(&tool_use("write", false)), "not mutating");
        assert!(!filters.pre_tool_use_sees(&tool_use("delete", true)), "not listed");
        // The other hook is untouched.
        assert!(filters.post_tool_use_sees(&tool_use("delete", false), &result("")));
    }

    #[test]
    fn tool_names_may_be_patterns_and_exceptions_win() {
        let mut filters = HookFilters::default();
        let mut notes_but_listing = filter(false, &["notes_*", "lamp_?et"], None);
        notes_but_listing.except_tools = vec!["notes_get_*".into()];
        filters.declare(ToolHook::PreToolUse, Reach::Only(notes_but_listing.into()));
        assert!(filters.pre_tool_use_sees(&tool_use("notes_add", false)));
        assert!(filters.pre_tool_use_sees(&tool_use("lamp_set", false)));
        assert!(!filters.pre_tool_use_sees(&tool_use("notes_get_all", false)), "excepted");
        assert!(!filters.pre_tool_use_sees(&tool_use("read_file", false)), "not named");

        let mut all_but_reads = filter(false, &[], None);
        all_but_reads.except_tools = vec!["read_*".into()];
        filters.declare(ToolHook::PreToolUse, Reach::Only(all_but_reads.into()));
        assert!(filters.pre_tool_use_sees(&tool_use("write_file", true)));
        assert!(!filters.pre_tool_use_sees(&tool_use("read_file", false)));
    }

    #[test]
    fn output_length_counts_for_post_tool_use_only() {
        let mut filters = HookFilters::default();
        let longer_than_4 = Reach::Only(filter(false, &[], Some(4)).into());
        filters.declare(ToolHook::PostToolUse, longer_than_4.clone());
        filters.declare(ToolHook::PreToolUse, longer_than_4);
        let read = tool_use("read", false);
        assert!(!filters.post_tool_use_sees(&read, &result("1234")));
        assert!(filters.post_tool_use_sees(&read, &result("12345")));
        // Multi-byte output is measured in UTF-8 bytes, as the plugin would measure it.
        assert!(filters.post_tool_use_sees(&read, &result("ééé")));
        assert!(filters.pre_tool_use_sees(&read));
    }

    #[test]
    fn never_and_replacing_a_declaration() {
        let mut filters = HookFilters::default();
        filters.declare(ToolHook::PostToolUse, Reach::Never);
        assert!(!filters.post_tool_use_sees(&tool_use("read", true), &result("long output")));
        filters.declare(ToolHook::PostToolUse, Reach::Every);
        assert!(filters.post_tool_use_sees(&tool_use("read", true), &result("")));
    }
}
