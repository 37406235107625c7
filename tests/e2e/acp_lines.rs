//! `agent-host acp` reading lines it should not hold or echo, through the real binary on raw
//! stdio: a line far over the cap is answered (to its request's id) without the agent's
//! memory growing with it, and the agent serves on; a line that is not JSON is answered
//! quoting only its start.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

use crate::support::FakeModel;
use crate::support::acp_client::{deployment, spawn_agent};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;

/// Writes `line` and a line break, and reads the next answer line.
async fn exchange(stdin: &mut ChildStdin, stdout: &mut Lines<BufReader<ChildStdout>>, line: &[u8]) -> String {
    stdin.write_all(line).await.unwrap();
    stdin.write_all(b"\n").await.unwrap();
    stdin.flush().await.unwrap();
    stdout.next_line().await.unwrap().expect("an answer line")
}

/// The process's peak resident memory so far, in bytes (`VmHWM`).
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM in /proc/PID/status");
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[tokio::test]
async fn a_line_far_over_the_cap_is_answered_without_being_held_and_the_agent_serves_on() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, "");
    let mut child = spawn_agent(dir.path());
    let pid = child.id().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let answer: Value =
        serde_json::from_str(&exchange(&mut stdin, &mut stdout, INITIALIZE.as_bytes()).await).unwrap();
    assert_eq!(answer["result"]["protocolVersion"], 1, "{answer}");
    let before = peak_memory(pid);

    // A prompt 64 MiB over the cap, its id first as editors write it.
    let over = agent_host_acp::MAX_LINE_BYTES + 64 * 1024 * 1024;
    let start = r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":""#;
    let end = r#""}]}}"#;
    let mut line = Vec::with_capacity(over);
    line.extend_from_slice(start.as_bytes());
    line.resize(over - end.len(), b'a');
    line.extend_from_slice(end.as_bytes());
    let answer_line = exchange(&mut stdin, &mut stdout, &line).await;
    let first_200 = String::from_utf8(line[..200].to_vec()).unwrap();
    drop(line);
    let grown = peak_memory(pid).saturating_sub(before);
    assert!(
        grown < (over / 2) as u64,
        "the agent's peak memory grew {grown} bytes reading a line of {over} bytes"
    );

    assert!(answer_line.len() < 2048, "the answer quotes only the start: {} bytes", answer_line.len());
    let answer: Value = serde_json::from_str(&answer_line).unwrap();
    assert_eq!(answer["id"], 7, "the request that was too long fails: {answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("{over} bytes")), "{message}");
    assert!(message.contains(&format!("limit of {} bytes", agent_host_acp::MAX_LINE_BYTES)), "{message}");
    assert_eq!(answer["error"]["data"]["line"].as_str().unwrap(), first_200);

    // The agent serves on, and leaves cleanly when the editor closes its stdin.
    let answer: Value = serde_json::from_str(
        &exchange(
            &mut stdin,
            &mut stdout,
            br#"{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#,
        )
        .await,
    )
    .unwrap();
    assert!(answer["result"]["sessionId"].is_string(), "{answer}");
    drop(stdin);
    let status =
        tokio::time::timeout(std::time::Duration::from_secs(60), child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_line_that_is_not_json_is_answered_quoting_its_first_200_bytes() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, "");
    let mut child = spawn_agent(dir.path());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    exchange(&mut stdin, &mut stdout, INITIALIZE.as_bytes()).await;

    let bad = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\" not json {}", "secret ".repeat(2000));
    let answer: Value =
        serde_json::from_str(&exchange(&mut stdin, &mut stdout, bad.as_bytes()).await).unwrap();
    assert_eq!(answer["error"]["data"], json!({"bytes": bad.len(), "line": &bad[..200]}));
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "Parse error: the line is not JSON: expected `,` or `}` at line 1 column 38"
    );

    // Bytes that are not UTF-8 are a bad line too, not the end of the connection.
    let answer: Value =
        serde_json::from_str(&exchange(&mut stdin, &mut stdout, b"{\"a\":\"\xff\xfe\"}").await).unwrap();
    assert_eq!(answer["error"]["message"], "Parse error: the line is not UTF-8 at byte 7", "{answer}");
    let answer: Value = serde_json::from_str(
        &exchange(
            &mut stdin,
            &mut stdout,
            br#"{"jsonrpc":"2.0","id":2,"method":"no/such_method","params":{}}"#,
        )
        .await,
    )
    .unwrap();
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -32601, "the agent serves on: {answer}");
}
