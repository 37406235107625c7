//! Each format read as ours: the fixtures (one realistic definition per format, as each
//! agent's documentation writes them), then each format's own words.

use std::collections::BTreeMap;
use std::path::Path;

use super::fixtures;
use crate::config::Config;
use crate::definition::{Definition, Read, parse, read_file};
use crate::format::Format;

fn fixture(path: &str, config: &Config) -> Read {
    read_file(Path::new(&format!("{}/{path}", fixtures())), format_of(path), config)
        .expect("the fixture reads")
}

fn format_of(path: &str) -> Format {
    Format::ALL
        .into_iter()
        .find(|format| path.starts_with(format.project_folder()))
        .expect("a format's folder")
}

fn offered(read: Read) -> Definition {
    match read {
        Read::Offered(definition) => definition,
        Read::NotOffered(why) => panic!("not offered: {why}"),
    }
}

/// `frontmatter` (lines) with `body`, as `file` in `format`, under the default config.
fn read(format: Format, file: &str, frontmatter: &str) -> Result<Read, Vec<String>> {
    parse(&format!("---\n{frontmatter}---\nThe prompt.\n"), file, format, &Config::default())
}

fn tools(names: &[&str]) -> Option<Vec<String>> {
    Some(names.iter().map(|name| (*name).to_owned()).collect())
}

#[test]
fn our_own_definition_is_the_childs_spec_as_written() {
    let explore = offered(fixture(".agents/agents/explore.md", &Config::default()));
    assert_eq!(explore.name, "explore");
    assert_eq!(
        explore.description,
        "Explores the codebase without changing it: finds where something is defined or used, maps how \
         modules fit together. Use it for open-ended searches across many files."
    );
    assert!(explore.system_prompt.as_deref().unwrap().starts_with("You explore a codebase"));
    assert!(explore.system_prompt.as_deref().unwrap().ends_with("most important first."));
    assert_eq!(explore.tools, tools(&["read_file", "list_dir", "glob", "grep"]));
    assert_eq!(
        (explore.model.as_deref(), explore.mode.as_deref(), explore.max_turns),
        (Some("small-fast"), Some("plan"), Some(12))
    );
    assert_eq!(explore.notes, Vec::<String>::new());
}

#[test]
fn claude_codes_tools_are_mapped_and_its_alias_is_the_parents_model_unless_models_maps_it() {
    let reviewer = offered(fixture(".claude/agents/code-reviewer.md", &Config::default()));
    assert_eq!(reviewer.name, "code-reviewer");
    assert!(reviewer.description.starts_with("Expert code reviewer. Use proactively"));
    assert!(reviewer.system_prompt.as_deref().unwrap().starts_with("You are a senior engineer"));
    assert_eq!(reviewer.tools, tools(&["read_file", "grep", "glob", "shell"]));
    assert_eq!((reviewer.model, reviewer.mode, reviewer.max_turns), (None, None, None));
    assert_eq!(
        reviewer.notes,
        [
            "model `sonnet` is a Claude Code alias that `models` does not map; the child uses its parent's model"
        ]
    );
    let config = Config {
        models: BTreeMap::from([("sonnet".to_owned(), "claude-sonnet-4-5".to_owned())]),
        ..Config::default()
    };
    let mapped = offered(fixture(".claude/agents/code-reviewer.md", &config));
    assert_eq!((mapped.model.as_deref(), mapped.notes.len()), (Some("claude-sonnet-4-5"), 0));
}

#[test]
fn opencodes_name_is_its_files_its_denials_keep_the_rest_of_all_tools_and_its_provider_is_dropped() {
    let review = offered(fixture(".opencode/agents/review.md", &Config::default()));
    assert_eq!(review.name, "review");
    assert_eq!(review.description, "Reviews code for quality and best practices without changing it");
    assert!(review.system_prompt.as_deref().unwrap().starts_with("You are in code review mode."));
    assert_eq!(review.tools, tools(&["read_file", "list_dir", "glob", "grep"]));
    assert_eq!(review.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(review.notes, ["`temperature` is not applied: sampling is the deployment's"]);
}

#[test]
fn an_opencode_primary_agent_is_not_offered() {
    let Read::NotOffered(why) = fixture(".opencode/agents/build.md", &Config::default()) else {
        panic!("a primary agent is offered")
    };
    assert_eq!(why, "`mode: primary` makes it an OpenCode primary agent, not a subagent");
}

#[test]
fn gemini_clis_tool_names_are_mapped_and_its_model_and_turns_kept() {
    let auditor = offered(fixture(".gemini/agents/security-auditor.md", &Config::default()));
    assert_eq!(auditor.name, "security-auditor");
    assert!(auditor.system_prompt.as_deref().unwrap().starts_with("You are a meticulous security auditor."));
    assert_eq!(auditor.tools, tools(&["read_file", "grep"]));
    assert_eq!((auditor.model.as_deref(), auditor.max_turns), (Some("gemini-2.5-pro"), Some(10)));
    assert_eq!(auditor.notes, ["`temperature` is not applied: sampling is the deployment's"]);
}

#[test]
fn ours_reads_a_tool_string_an_empty_list_and_notes_a_field_it_does_not_know() {
    let listed =
        offered(read(Format::Agents, "a.md", "name: a\ndescription: d\ntools: read_file, grep\n").unwrap());
    assert_eq!(listed.tools, tools(&["read_file", "grep"]));
    assert_eq!(listed.system_prompt.as_deref(), Some("The prompt."));
    let none =
        offered(read(Format::Agents, "a.md", "name: a\ndescription: d\ntools: []\nmax-turns: 3\n").unwrap());
    assert_eq!(none.tools, tools(&[]), "an empty list offers no tool");
    assert_eq!(
        none.notes,
        [
            "`max-turns` is no field of ours and is ignored (ours: name, description, tools, model, mode, max_turns)"
        ]
    );
    let all = offered(read(Format::Agents, "a.md", "name: a\ndescription: d\nmodel: inherit\n").unwrap());
    assert_eq!((all.tools, all.model), (None, None), "no list: every tool; inherit: the parent's model");
    let bare = parse("---\nname: a\ndescription: d\n---\n", "a.md", Format::Agents, &Config::default());
    assert_eq!(offered(bare.unwrap()).system_prompt, None, "no body: the deployment's instructions");
}

#[test]
fn claude_codes_tools_without_a_counterpart_or_narrowed_to_some_uses_are_left_out_with_a_note() {
    let text = "name: a\ndescription: d\ntools: Read, WebFetch, Bash(git diff:*), mcp__github__search\n\
                model: claude-opus-4-1\nmaxTurns: 5\npermissionMode: plan\ncolor: blue\n";
    let agent = offered(read(Format::Claude, "a.md", text).unwrap());
    assert_eq!(agent.tools, tools(&["read_file", "mcp__github__search"]));
    assert_eq!((agent.model.as_deref(), agent.max_turns), (Some("claude-opus-4-1"), Some(5)));
    assert_eq!(
        agent.notes,
        [
            "tool `WebFetch` (Claude Code) has no counterpart here and is left out",
            "tool `Bash(git diff:*)` is left out: a child is given whole tools, not some uses of `Bash`",
            "`permissionMode` is not applied: the child runs under this deployment's permission rules",
        ]
    );
    let denied = offered(
        read(Format::Claude, "a.md", "name: a\ndescription: d\ndisallowedTools: Bash, Write\n").unwrap(),
    );
    assert_eq!(denied.tools, tools(&["read_file", "edit_file", "list_dir", "glob", "grep"]));
    let both = "name: a\ndescription: d\ntools: [Read, Edit, MultiEdit]\ndisallowedTools: [Edit]\n";
    assert_eq!(offered(read(Format::Claude, "a.md", both).unwrap()).tools, tools(&["read_file"]));
}

#[test]
fn opencodes_star_off_lists_the_tools_turned_on_and_its_steps_are_max_turns() {
    let text =
        "description: d\ntools:\n  \"*\": false\n  read: true\n  grep: true\n  webfetch: true\nsteps: 8\n";
    let agent = offered(read(Format::OpenCode, "scout.md", text).unwrap());
    assert_eq!(agent.name, "scout");
    assert_eq!(agent.tools, tools(&["read_file", "grep"]));
    assert_eq!(agent.max_turns, Some(8));
    assert_eq!(agent.notes, ["tool `webfetch` (OpenCode) has no counterpart here and is left out"]);
    let older = offered(read(Format::OpenCode, "s.md", "description: d\nmaxSteps: 3\nmode: all\n").unwrap());
    assert_eq!((older.max_turns, older.tools), (Some(3), None));
    let permission = "description: d\npermission:\n  edit: deny\n";
    assert_eq!(
        offered(read(Format::OpenCode, "s.md", permission).unwrap()).notes,
        ["`permission` is not applied: the child runs under this deployment's permission rules; narrow its \
          tools with `tools`"]
    );
    assert_eq!(
        read(Format::OpenCode, "s.md", "description: d\ndisable: true\n"),
        Ok(Read::NotOffered("`disable: true`".into()))
    );
}

#[test]
fn gemini_clis_star_is_every_tool_a_pattern_is_matched_and_a_remote_agent_is_not_offered() {
    let star = offered(
        read(Format::Gemini, "a.md", "name: a\ndescription: d\ntools: ['*']\nmodel: inherit\n").unwrap(),
    );
    assert_eq!((star.tools, star.model), (None, None));
    let config =
        Config { all_tools: vec!["read_file".into(), "mcp_github_issues".into()], ..Config::default() };
    let text = "---\nname: a\ndescription: d\ntools: [run_shell_command, mcp_github_*, mcp_jira_*]\n---\n";
    let patterns = offered(parse(text, "a.md", Format::Gemini, &config).unwrap());
    assert_eq!(patterns.tools, tools(&["shell", "mcp_github_issues"]));
    assert_eq!(patterns.notes, ["tool pattern `mcp_jira_*` matches none of `all_tools` and allows nothing"]);
    let remote =
        read(Format::Gemini, "a.md", "kind: remote\nname: a\nagent_card_url: https://example.com/card\n");
    assert!(matches!(remote, Ok(Read::NotOffered(why)) if why.starts_with("`kind: remote`")));
}

#[test]
fn every_problem_of_a_file_is_told_naming_its_field() {
    let problems = |format, file, text| read(format, file, text).expect_err("the definition has problems");
    assert_eq!(
        problems(Format::Agents, "a.md", "tools: {read_file: true}\nmax_turns: 0\n"),
        [
            "`name` is missing; it is required",
            "`description` is missing; it is required",
            "`tools` must be a comma-separated string or a list of tool names, not a map",
            "`max_turns` must be a whole number from 1 to 4294967295, not 0",
        ]
    );
    assert_eq!(
        problems(Format::Claude, "a.md", "name: Code Reviewer\ndescription: \"  \"\ntools: [Read, 3]\n"),
        [
            "`name` \"Code Reviewer\" holds ` `: only letters a-z and A-Z, digits, `-`, `_` and `.` are allowed",
            "`description` is blank; say what the agent does and when to use it",
            "`tools` lists a whole number, not a tool's name",
        ]
    );
    assert_eq!(
        problems(Format::OpenCode, "My Agent.md", "description: d\nmode: helper\ntools: [read]\n"),
        [
            "the file's name gives the agent's name, and `name` \"My Agent\" holds ` `: only letters a-z and \
             A-Z, digits, `-`, `_` and `.` are allowed; rename the file",
            "`mode` must be `primary`, `subagent` or `all` (OpenCode's kinds of agent), not `helper`",
            "`tools` must be a map of tool names to true or false (OpenCode's form), not a list",
        ]
    );
    assert_eq!(
        problems(Format::OpenCode, "a.md", "description: d\ntools:\n  read: maybe\n"),
        ["`tools.read` must be true or false, not a string"]
    );
    assert_eq!(
        problems(Format::Gemini, "a.md", "name: a\ndescription: d\nkind: cloud\ntools: {read_file: true}\n"),
        [
            "`kind` must be `local` or `remote`, not `cloud`",
            "`tools` must be a comma-separated string or a list of tool names, not a map",
        ]
    );
    let bad_yaml = parse("---\nname: a\ndescription: [d\n---\n", "a.md", Format::Agents, &Config::default());
    assert!(bad_yaml.unwrap_err()[0].starts_with("its frontmatter is not valid YAML: "));
    let no_front = parse("# Just markdown\n", "a.md", Format::Claude, &Config::default());
    assert!(no_front.unwrap_err()[0].starts_with("it has no frontmatter"));
}
