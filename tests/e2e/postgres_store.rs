//! `[storage] url`: sessions in a real PostgreSQL, written by one process and resumed by the
//! next, as with SQLite; the password comes from the variable `password_env` names.

use crate::support::postgres::{PASSWORD, TestServer};
use crate::support::{FakeModel, Reply, config_text, json_prompt_command};

/// The variable the deployment's `password_env` names.
const PASSWORD_VAR: &str = "AGENT_HOST_TEST_DB_PASSWORD";

/// A deployment whose sessions live in a fresh PostgreSQL database; the folder and the URL.
fn deployment(model: &FakeModel) -> (tempfile::TempDir, String) {
    let url = TestServer::fresh_database();
    let dir = tempfile::tempdir().unwrap();
    let storage = format!("[storage]\nurl = \"{url}\"\npassword_env = \"{PASSWORD_VAR}\"\n");
    let config = config_text(&model.url(), "").replace("[storage]\npath = \"sessions.db\"\n", &storage);
    assert!(config.contains(&storage), "the storage table was replaced");
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    (dir, url)
}

async fn turn(
    dir: &std::path::Path,
    session: Option<&str>,
    prompt: &str,
    password: Option<&str>,
) -> std::process::Output {
    let mut command = json_prompt_command(dir, session, prompt);
    command
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .env_remove(PASSWORD_VAR)
        .stdin(std::process::Stdio::null());
    if let Some(password) = password {
        command.env(PASSWORD_VAR, password);
    }
    command.output().await.unwrap()
}

/// The session id a `--json` turn reports.
fn session_id(stdout: &str) -> String {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|event| event["session_id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no session id in {stdout}"))
}

#[tokio::test]
async fn a_turn_kept_in_postgres_is_resumed_by_the_next_process() {
    let model = FakeModel::start().await;
    let (dir, url) = deployment(&model);
    model.push(Reply::text("first answer"));
    let first = turn(dir.path(), None, "first question", Some(PASSWORD)).await;
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&first.stdout);
    let id = session_id(&stdout);
    assert!(stdout.contains("first answer"), "{stdout}");

    model.push(Reply::text("second answer"));
    let second = turn(dir.path(), Some(&id), "second question", Some(PASSWORD)).await;
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(stdout.contains(&format!(r#""session_id":"{id}","resumed":true"#)), "{stdout}");
    let last = model.requests().pop().unwrap().to_string();
    assert!(
        last.contains("first question") && last.contains("first answer"),
        "the history went with it: {last}"
    );

    // Kept in the database, not in a SQLite file beside the config.
    assert!(!dir.path().join("sessions.db").exists());
    let mut config: postgres::Config = url.parse().unwrap();
    let rows: i64 = tokio::task::spawn_blocking(move || {
        let mut client = config.password(PASSWORD).connect(postgres::NoTls).unwrap();
        client.query_one("SELECT COUNT(*) FROM messages", &[]).unwrap().get(0)
    })
    .await
    .unwrap();
    assert_eq!(rows, 4, "two questions and two answers");

    // `agent-host sessions` lists it from the same database.
    let listed = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .env(PASSWORD_VAR, PASSWORD)
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(["sessions", "--json"])
        .output()
        .await
        .unwrap();
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let listed: Vec<serde_json::Value> = listed
        .stdout
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect();
    let [entry] = &listed[..] else { panic!("one session listed: {listed:?}") };
    assert_eq!(entry["id"], id.as_str());
    assert_eq!(entry["title"], "first question");
    assert_eq!(entry["messages"], 4);
}

#[tokio::test]
async fn a_missing_password_variable_is_named_and_a_wrong_password_refused() {
    let model = FakeModel::start().await;
    let (dir, url) = deployment(&model);
    let missing = turn(dir.path(), None, "hello", None).await;
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains(&format!("password_env names {PASSWORD_VAR}, which is not set")), "{stderr}");

    let wrong = turn(dir.path(), None, "hello", Some("not-the-password")).await;
    assert!(!wrong.status.success());
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(stderr.contains(&format!("session store at {url}")) && stderr.contains("password"), "{stderr}");
    assert!(!stderr.contains("not-the-password"), "the password is not shown: {stderr}");
    assert!(model.requests().is_empty(), "no turn ran");
}

/// `agent-host sessions copy` with `args`, run from the deployment at `dir` (the password in
/// the variable the options name); its status and what it printed.
async fn copy(dir: &std::path::Path, args: &[&str]) -> (bool, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(["sessions", "copy"])
        .args(args)
        .env(PASSWORD_VAR, PASSWORD)
        .output()
        .await
        .unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), said)
}

#[tokio::test]
async fn sessions_copied_from_sqlite_to_postgres_resume_there_and_a_second_copy_leaves_them() {
    let model = FakeModel::start().await;
    // A SQLite deployment with one session of one exchange.
    let sqlite = tempfile::tempdir().unwrap();
    std::fs::write(sqlite.path().join("config.toml"), config_text(&model.url(), "")).unwrap();
    model.push(Reply::text("kept answer"));
    let first = turn(sqlite.path(), None, "kept question", None).await;
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let id = session_id(&String::from_utf8_lossy(&first.stdout));

    let (postgres, url) = deployment(&model);
    let from = format!("sqlite:{}", sqlite.path().join("sessions.db").display());
    let args = ["--from", &from, "--to", &url, "--to-password-env", PASSWORD_VAR];
    let (ok, said) = copy(sqlite.path(), &args).await;
    assert!(ok, "{said}");
    assert!(said.contains("copied 1 sessions (2 messages); 0 the target had already"), "{said}");
    let (ok, said) = copy(sqlite.path(), &args).await;
    assert!(ok && said.contains("copied 0 sessions (0 messages); 1 the target had already"), "{said}");

    // The PostgreSQL deployment resumes it with its history.
    model.push(Reply::text("answer in postgres"));
    let resumed = turn(postgres.path(), Some(&id), "next question", Some(PASSWORD)).await;
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(String::from_utf8_lossy(&resumed.stdout).contains(r#""resumed":true"#));
    let last = model.requests().pop().unwrap().to_string();
    assert!(last.contains("kept question") && last.contains("kept answer"), "{last}");

    // A password in the URL is refused: a process list shows it.
    let with_password = url.replacen('@', &format!(":{PASSWORD}@"), 1);
    let (ok, said) = copy(sqlite.path(), &["--from", &from, "--to", &with_password]).await;
    assert!(!ok && said.contains("holds a password") && !said.contains(PASSWORD), "{said}");
}

#[tokio::test]
async fn sessions_copy_never_repeats_a_password_it_was_given() {
    let model = FakeModel::start().await;
    let sqlite = tempfile::tempdir().unwrap();
    std::fs::write(sqlite.path().join("config.toml"), config_text(&model.url(), "")).unwrap();
    let from = format!("sqlite:{}", sqlite.path().join("sessions.db").display());
    // Nothing listens on port 1 of the loopback: every attempt fails, each in its own way.
    let secret = "hunter2-never-shown";
    for to in [
        format!("host=127.0.0.1 port=1 user=agent password={secret} dbname=sessions"),
        format!("password='{secret}' host=127.0.0.1"),
        format!("postgres://agent:{secret}@127.0.0.1:1/sessions"),
        format!("postgresql://agent@127.0.0.1:1/sessions?password={secret}"),
        format!("mysql://agent:{secret}@127.0.0.1:1/sessions"),
    ] {
        let (ok, said) = copy(sqlite.path(), &["--from", &from, "--to", &to]).await;
        assert!(!said.contains(secret), "the password is repeated: {said}");
        assert!(!ok, "`{to}` was taken: {said}");
        assert!(said.contains("--to"), "the error names the option: {said}");
    }
    // With the password where it belongs, the closed port's error names the store, not it.
    let to = "postgres://agent@127.0.0.1:1/sessions";
    let (ok, said) =
        copy(sqlite.path(), &["--from", &from, "--to", to, "--to-password-env", PASSWORD_VAR]).await;
    assert!(!ok && said.contains(to), "{said}");
    assert!(!said.contains(PASSWORD), "{said}");
}
