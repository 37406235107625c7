//! Standing approvals through the real binary, answered on a piped stdin: "always this
//! tool" answers later asks for the same reason only, a more specific ask is put to the
//! operator again, and `/approvals` lists and revokes them.

use crate::support::{plugin_block, scripted_console};

const PROMPT_HEADER: &str = "── approval needed ──";
/// The start of the line that offers the answers, after each question.
const ANSWERS: &str = "[y] once";

#[test]
fn always_this_tool_does_not_answer_a_more_specific_ask_and_can_be_listed_and_revoked() {
    let script = r#"
[[turn]]
tool_calls = [{ name = "remember", arguments = { key = "a", value = 1, command = "make" } }]
[[turn]]
text = "one"
[[turn]]
tool_calls = [{ name = "remember", arguments = { key = "b", value = 2, command = "ls" } }]
[[turn]]
text = "two"
[[turn]]
tool_calls = [{ name = "remember", arguments = { key = "c", value = 3, command = "rm -rf build" } }]
[[turn]]
text = "three"
[[turn]]
tool_calls = [{ name = "remember", arguments = { key = "d", value = 4, command = "make" } }]
[[turn]]
text = "four"
"#;
    let plugins = format!(
        "{}{}",
        plugin_block("misbehave", ""),
        plugin_block(
            "permissions",
            r#"[plugin.config]
preset = "ask-to-mutate"
rules = [
  { tool = "remember", args = { command = "rm *" }, decision = "ask", reason = "deleting needs a look" },
  { tool = "remember", decision = "ask", reason = "remembering needs a look" },
]"#
        )
    );
    let input = [
        "first",  // asked (the generic rule): always this tool
        "a",      //
        "second", // the same ask: answered by the standing approval
        "third",  // the specific rule asks: put to the operator again, refused
        "n",      //
        "",       // no reason for the model
        "/approvals",
        "/approvals revoke 1",
        "/approvals",
        "fourth", // the generic ask again, now that nothing stands: asked, allowed once
        "y",
        "/help",
        "",
    ]
    .join("\n");
    let stdout = scripted_console(script, &plugins, &input);

    // Each question ends with the answers offered; it is what follows its header.
    let segments: Vec<&str> = stdout.split(ANSWERS).collect();
    let asks: Vec<&str> = segments[..segments.len() - 1]
        .iter()
        .map(|before| before.rfind(PROMPT_HEADER).map_or(*before, |start| &before[start..]))
        .collect();
    assert_eq!(asks.len(), 3, "asked for a, c and d, not b:\n{stdout}");
    assert!(asks[0].contains(r#""key":"a""#) && asks[0].contains("remembering needs a look"), "{}", asks[0]);
    assert!(asks[1].contains(r#""key":"c""#) && asks[1].contains("deleting needs a look"), "{}", asks[1]);
    assert!(asks[2].contains(r#""key":"d""#) && asks[2].contains("remembering needs a look"), "{}", asks[2]);

    assert!(stdout.contains("✓ 2 values remembered"), "b ran unasked: {stdout}");
    assert!(stdout.contains("the call was refused by operator"), "c was refused: {stdout}");
    assert!(stdout.contains("✓ 3 values remembered"), "d ran: {stdout}");

    // Each command's answer follows the console prompt (`> `) on its line: stdin is a pipe.
    let listing = stdout
        .lines()
        .find(|line| line.contains("1. remember"))
        .unwrap_or_else(|| panic!("/approvals lists one: {stdout}"));
    assert!(listing.contains("1. remember with any arguments, when permissions@"), "{listing}");
    assert!(listing.contains("asks because: remembering needs a look (granted "), "{listing}");
    assert!(listing.ends_with(" s ago)") && !listing.contains("unix"), "{listing}");
    assert!(!stdout.contains("2. remember"), "only one was given: {stdout}");
    assert!(stdout.contains("revoked: remember with any arguments"), "{stdout}");
    assert!(stdout.contains("no standing approvals in this session"), "{stdout}");
    assert!(stdout.contains("/approvals revoke N|all"), "/help names the commands: {stdout}");
}
