//! `agent-host serve` on the shipped `config.toml`, exactly as README says: it has no
//! `[serve]` table, so on loopback the server makes a one-time token for an admin and prints
//! a sign-in link carrying it (in the fragment, which no request sends), never in its log.
//! Off loopback, configured tokens are still required.

use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};

use crate::support::repo_root;

fn shipped_serve(listen: &str, extra: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command
        .current_dir(repo_root())
        .args(["serve", "--config", "config.toml", "--listen", listen, "-vv"])
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

#[tokio::test]
async fn the_shipped_config_serves_with_a_one_time_sign_in_link_kept_out_of_the_log() {
    let mut child = shipped_serve("127.0.0.1:0", &[]).spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    // The stock plugins are builtins: nothing is built first.
    let mut next =
        async || tokio::time::timeout(Duration::from_secs(600), stdout.next_line()).await.unwrap().unwrap();
    let Some(listening) = next().await else { return ended_early(child).await };
    let base = listening.strip_prefix("agent-host serve: listening on ").expect(&listening).to_owned();
    let Some(sign_in) = next().await else { return ended_early(child).await };
    assert!(sign_in.starts_with("sign in (as `operator`, an admin;"), "{sign_in}");
    let link = sign_in.rsplit(' ').next().unwrap();
    let token = link.strip_prefix(&format!("{base}/#token=")).expect(link);
    assert!(token.len() == 48 && token.chars().all(|c| c.is_ascii_hexdigit()), "{token}");

    let http =
        reqwest::Client::builder().use_preconfigured_tls(agent_host::tls::client_config()).build().unwrap();
    let get = async |bearer: &str, path: &str| {
        let response = http.get(format!("{base}{path}")).bearer_auth(bearer).send().await.unwrap();
        response.status()
    };
    assert_eq!(get(token, "/v1/sessions").await, StatusCode::OK);
    assert_eq!(get(token, "/v1/plugins").await, StatusCode::OK, "an admin's route");
    assert_eq!(get("not-the-one-time-token-at-all", "/v1/sessions").await, StatusCode::UNAUTHORIZED);
    // The page itself needs no token; the link's fragment never reaches the server.
    let page = http.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);

    child.start_kill().unwrap();
    let mut log = String::new();
    child.stderr.take().unwrap().read_to_string(&mut log).await.unwrap();
    child.wait().await.unwrap();
    assert!(!log.is_empty(), "-vv logs something");
    assert!(!log.contains(token), "the token reached the log:\n{log}");
}

/// A server that closed its output before it said what the test waits for: fails with what
/// it said on stderr.
async fn ended_early(mut child: tokio::process::Child) {
    let mut log = String::new();
    child.stderr.take().unwrap().read_to_string(&mut log).await.unwrap();
    let status = child.wait().await.unwrap();
    panic!("the server ended ({status}) before it printed its sign-in link:\n{log}");
}

#[tokio::test]
async fn off_loopback_the_shipped_config_is_refused_until_tokens_are_configured() {
    let output = shipped_serve("0.0.0.0:0", &["--insecure"]).output().await.unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains(
            "[serve] tokens names no principal (a one-time token is made only when listening on loopback)"
        ),
        "{said}"
    );
    assert!(output.stdout.is_empty(), "nothing listened: {}", String::from_utf8_lossy(&output.stdout));
}
