use agent_host_sdk::process::{RunOutput, RunRequest};
use agent_host_sdk::testing::{self, Harness};
use agent_host_sdk::{Requirement, json};

fn cut_short(request: &RunRequest) -> Result<RunOutput, String> {
    Ok(RunOutput {
        status: None,
        stdout: format!("ran {}", request.command.rsplit("; ").next().unwrap_or_default()),
        stderr: String::new(),
        timed_out: true,
        truncated: false,
        timeout_cut_to_ms: Some(1500),
    })
}

fn finished(request: &RunRequest) -> Result<RunOutput, String> {
    Ok(RunOutput {
        status: Some(0),
        stdout: format!("{} ms, {} bytes", request.timeout_ms, request.max_output_bytes),
        stderr: "warning".to_owned(),
        timed_out: false,
        truncated: true,
        timeout_cut_to_ms: None,
    })
}

#[test]
fn a_cut_timeout_is_reported_as_the_time_really_given() {
    let shell = Harness::new(crate::plugin(), json!({})).unwrap();
    testing::on_process(cut_short);
    let text = shell.tool("shell", json!({"command": "sleep 9", "timeout_ms": 9000})).unwrap();
    assert_eq!(
        text,
        "exit status: none (killed)\nstdout:\nran sleep 9\nstderr:\n\nnote: timeout_ms cut to 1500 ms (asked 9000 \
         ms): what was left of the plugin call's deadline\nnote: timed out after 1500 ms and was killed"
    );
}

#[test]
fn the_configured_limits_apply_when_the_call_names_none() {
    let shell = Harness::new(crate::plugin(), json!({"timeout_ms": 700, "max_output_bytes": 10})).unwrap();
    testing::on_process(finished);
    let text = shell.tool("shell", json!({"command": "make"})).unwrap();
    assert_eq!(
        text,
        "exit status: 0\nstdout:\n700 ms, 10 bytes\nstderr:\nwarning\nnote: output cut at 10 bytes per stream"
    );
}

#[test]
fn it_requires_processes_and_refuses_a_zero_timeout() {
    let shell = Harness::new(crate::plugin(), json!({})).unwrap();
    assert_eq!(shell.requires(), [Requirement::RunsProcesses]);
    assert!(shell.provide().tools[0].mutates);
    let error = Harness::new(crate::plugin(), json!({"timeout_ms": 0})).err().unwrap();
    assert_eq!(error, "`timeout_ms` must be at least 1");
}
