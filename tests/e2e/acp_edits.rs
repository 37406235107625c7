//! `agent-host acp`: a file a tool changed reaches the editor as a diff in the call's result,
//! from the `edits` the tool told (contract 0.2.5), never from its arguments.

use agent_client_protocol::v1::schema::{StopReason, ToolCallContent};

use crate::support::acp_client::{deployment, finished_calls, open, prompt, with_client};
use crate::support::{FakeModel, Reply, plugin_block, writable_workspace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_and_an_edit_arrive_as_diffs_with_the_calls_result() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("write_file", r##"{"path": "notes.md", "content": "# Notes\nfirst\n"}"##));
    model.push(Reply::tool(
        "edit_file",
        r#"{"path": "notes.md", "old_string": "first", "new_string": "second"}"#,
    ));
    model.push(Reply::tool("read_file", r#"{"path": "notes.md"}"#));
    model.push(Reply::text("Written and edited."));
    let workspace = tempfile::tempdir().unwrap();
    let grant = writable_workspace(workspace.path());
    let dir = deployment(&model, &plugin_block("fs", &grant));
    let path = dir.path().to_owned();
    let (stop, seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        prompt(&cx, &session, "write the notes").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(std::fs::read_to_string(workspace.path().join("notes.md")).unwrap(), "# Notes\nsecond\n");

    // The content of each call's last update, in order of the calls.
    let finished: Vec<Vec<ToolCallContent>> =
        finished_calls(&seen.updates()).into_iter().filter_map(|fields| fields.content).collect();
    assert_eq!(finished.len(), 3, "{finished:#?}");
    let diffs = |content: &[ToolCallContent]| -> Vec<(String, Option<String>, String)> {
        content
            .iter()
            .filter_map(|c| match c {
                ToolCallContent::Diff(diff) => {
                    Some((diff.path.display().to_string(), diff.old_text.clone(), diff.new_text.clone()))
                }
                _ => None,
            })
            .collect()
    };
    assert_eq!(diffs(&finished[0]), [("notes.md".to_owned(), None, "# Notes\nfirst\n".to_owned())]);
    assert_eq!(
        diffs(&finished[1]),
        [("notes.md".to_owned(), Some("# Notes\nfirst\n".to_owned()), "# Notes\nsecond\n".to_owned())]
    );
    assert_eq!(diffs(&finished[2]), [], "a read changed nothing");
    // The result text follows the diff, as before.
    assert!(matches!(finished[1].last(), Some(ToolCallContent::Content(_))), "{:#?}", finished[1]);
}
