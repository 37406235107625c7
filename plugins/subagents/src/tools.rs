//! A definition's tools: the names each format writes mapped to this deployment's stock tools,
//! and what it allows and denies turned into the one list a child is started with. The host
//! takes only a list of the tools a child may use (or none: all its parent's), so a denial
//! is taken from `all_tools`, and a tool with no counterpart here is left out, never widened
//! into another.

use workspace_path::glob_match;

use crate::format::Format;

/// Claude Code's tools and ours; `None`: no counterpart here.
const CLAUDE: &[(&str, Option<&str>)] = &[
    ("Read", Some("read_file")),
    ("Write", Some("write_file")),
    ("Edit", Some("edit_file")),
    ("MultiEdit", Some("edit_file")),
    ("Glob", Some("glob")),
    ("Grep", Some("grep")),
    ("LS", Some("list_dir")),
    ("Bash", Some("shell")),
    ("TodoWrite", Some("TodoWrite")),
    ("NotebookRead", None),
    ("NotebookEdit", None),
    ("WebFetch", None),
    ("WebSearch", None),
    ("Task", None),
    ("Agent", None),
    ("BashOutput", None),
    ("KillShell", None),
    ("ExitPlanMode", None),
];

/// OpenCode's tools and ours.
const OPENCODE: &[(&str, Option<&str>)] = &[
    ("read", Some("read_file")),
    ("write", Some("write_file")),
    ("edit", Some("edit_file")),
    ("patch", Some("edit_file")),
    ("list", Some("list_dir")),
    ("glob", Some("glob")),
    ("grep", Some("grep")),
    ("bash", Some("shell")),
    ("todowrite", Some("TodoWrite")),
    ("todoread", None),
    ("webfetch", None),
    ("websearch", None),
    ("task", None),
];

/// Gemini CLI's tools and ours.
const GEMINI: &[(&str, Option<&str>)] = &[
    ("read_file", Some("read_file")),
    ("read_many_files", Some("read_file")),
    ("write_file", Some("write_file")),
    ("replace", Some("edit_file")),
    ("list_directory", Some("list_dir")),
    ("glob", Some("glob")),
    ("grep_search", Some("grep")),
    ("search_file_content", Some("grep")),
    ("run_shell_command", Some("shell")),
    ("web_fetch", None),
    ("google_web_search", None),
    ("save_memory", None),
    ("write_todos", None),
];

/// What a definition says of its tools, in this deployment's names. Names may be patterns
/// (`mcp__github__*`), matched with `*` and `?`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolRules {
    /// The tools it may use; none: every tool.
    pub allow: Option<Vec<String>>,
    /// The tools it may not use, of those allowed.
    pub deny: Vec<String>,
}

/// `name` as `format` writes it, in this deployment's name; none, with a note, when it has
/// no counterpart here. A name no table knows (an MCP tool, a plugin's) stays as written.
pub fn ours(format: Format, name: &str, notes: &mut Vec<String>) -> Option<String> {
    let name = name.trim();
    let table = match format {
        Format::Agents => return Some(name.to_owned()),
        Format::Claude => CLAUDE,
        Format::OpenCode => OPENCODE,
        Format::Gemini => GEMINI,
    };
    if let Some(open) = name.find('(') {
        // `Bash(git diff:*)` is one use of a tool; the whole tool would be more than it says.
        notes.push(format!(
            "tool `{name}` is left out: a child is given whole tools, not some uses of `{}`",
            &name[..open]
        ));
        return None;
    }
    match table.iter().find(|(theirs, _)| *theirs == name) {
        Some((_, Some(ours))) => Some((*ours).to_owned()),
        Some((_, None)) => {
            notes
                .push(format!("tool `{name}` ({}) has no counterpart here and is left out", format.vendor()));
            None
        }
        None => Some(name.to_owned()),
    }
}

/// The list a child is started with: none for every tool its parent has, or the tools it may
/// use, patterns expanded against `all_tools`, in the order written, each once.
pub fn resolve(rules: ToolRules, all_tools: &[String], notes: &mut Vec<String>) -> Option<Vec<String>> {
    let allowed: Vec<String> = match rules.allow {
        Some(allow) if !allow.iter().any(|name| name == "*") => {
            allow.iter().flat_map(|name| expand(name, all_tools, notes)).collect()
        }
        // Every tool: the parent's own set, unless some must be taken out of it.
        _ if rules.deny.is_empty() => return None,
        _ => all_tools.to_vec(),
    };
    let mut kept: Vec<String> = Vec::new();
    for name in allowed {
        if !rules.deny.iter().any(|pattern| glob_match(pattern, &name)) && !kept.contains(&name) {
            kept.push(name);
        }
    }
    Some(kept)
}

/// The tools `name` allows: itself, or for a pattern the tools of `all_tools` it matches.
fn expand(name: &str, all_tools: &[String], notes: &mut Vec<String>) -> Vec<String> {
    if !name.contains(['*', '?']) {
        return vec![name.to_owned()];
    }
    let matched: Vec<String> = all_tools.iter().filter(|tool| glob_match(name, tool)).cloned().collect();
    if matched.is_empty() {
        notes.push(format!("tool pattern `{name}` matches none of `all_tools` and allows nothing"));
    }
    matched
}
