//! Granted folders as an attacker who writes in one would redirect them: the real binary
//! (`--prompt … --json`) against the fake model, the real shell plugin in the real sandbox
//! swapping a folder another grant names for a link to the deployment (or to any folder),
//! then a process (the `misbehave` plugin's `run`) or a WASI call (the `fs` plugin's
//! `read_file`) reaching for it. A grant nested in a writable one of the same plugin is
//! refused at load; across plugins the folder is opened without following links, so the
//! call fails, naming the link, and nothing of the deployment is read.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, config_text, json_prompt_command, plugin_block};

/// The variable `config_text` names in `[model].api_key_env`.
const KEY_ENV: &str = "AGENT_HOST_TEST_KEY";
/// A line of `config_text`'s config: seeing it in any output means the config was read.
const CONFIG_LINE: &str = "api_key_env = \"AGENT_HOST_TEST_KEY\"";

/// A deployment folder (`config.toml`, `sessions.db`) with the shell's `workspace/`, which
/// holds `docs/` and `a/docs/`, and `outside/docs/secret.txt`, granted to no one.
struct Deployment {
    dir: tempfile::TempDir,
    model: FakeModel,
}

impl Deployment {
    /// The shell plugin with `/workspace` writable and `shell_grants` more, then `others`
    /// (plugin blocks, `{ws}` standing for the workspace's path).
    async fn new(shell_grants: &str, others: &str) -> Self {
        let model = FakeModel::start().await;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for folder in ["workspace/docs", "workspace/a/docs", "outside/docs", "scratch"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        std::fs::write(root.join("workspace/docs/readme.txt"), "granted docs\n").unwrap();
        std::fs::write(root.join("outside/docs/secret.txt"), "top-secret\n").unwrap();
        let ws = root.join("workspace").display().to_string();
        let shell = format!(
            "[plugin.grants]\nprocess = true\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{ws}\", write = true }}\n{}",
            shell_grants.replace("{ws}", &ws)
        );
        let plugins = format!("{}\n{}", plugin_block("shell", &shell), others.replace("{ws}", &ws));
        let config = config_text(&model.url(), &plugins)
            .replace("{scratch}", &root.join("scratch").display().to_string());
        std::fs::write(root.join("config.toml"), config).unwrap();
        Self { dir, model }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// One turn: the model makes each call in a reply of its own, then ends.
    async fn run(&self, calls: &[(&str, Value)]) -> Output {
        for (tool, args) in calls {
            self.model.push(Reply::tool(tool, &args.to_string()));
        }
        self.model.push(Reply::text("done"));
        json_prompt_command(self.dir.path(), None, "run the commands")
            .env_remove("RUST_LOG")
            .env(KEY_ENV, "sk-test")
            .stdin(Stdio::null())
            .output()
            .await
            .expect("the binary runs")
    }
}

/// The `tool_result` events of a run, in order.
fn results(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "tool_result")
        .collect()
}

fn assert_nothing_read(output: &Output, secret: &str) {
    for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(secret), "{secret} was read, on {stream}: {text}");
    }
}

/// Swaps `workspace/docs` for a link to `target`, through the shell.
fn swap_docs_for(target: &Path) -> (&'static str, Value) {
    ("shell", json!({"command": format!("rm -rf docs && ln -s {} docs && echo swapped", target.display())}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audits_docs_grant_inside_the_workspace_is_refused_before_anything_runs() {
    // The audit's reproduction: `/docs` read-only inside the writable `/workspace` was
    // mounted before it (so writable), and after `rm -rf docs && ln -s <deployment> docs`
    // the next command read config.toml.
    let deployment = Deployment::new("\"/docs\" = { host = \"{ws}/docs\" }\n", "").await;
    let root = deployment.root();
    let output = deployment
        .run(&[
            ("shell", json!({"command": "touch docs/written && echo docs-writable"})),
            swap_docs_for(&root),
            ("shell", json!({"command": format!("cat {}/config.toml", root.display())})),
        ])
        .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "the deployment is refused; stderr: {stderr}");
    assert!(stderr.contains("`plugin[0].grants.dirs.\"/docs\"`"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the read-only grant \"/docs\" ({ws}/docs) is inside the writable grant \"/workspace\" ({ws})",
            ws = root.join("workspace").display()
        )),
        "{stderr}"
    );
    assert!(results(&output).is_empty(), "nothing ran");
    assert!(!root.join("workspace/docs/written").exists());
    assert!(root.join("workspace/docs").is_dir() && !root.join("workspace/docs").is_symlink());
    assert_nothing_read(&output, CONFIG_LINE);
}

/// The `misbehave` plugin, granted `grant` (read-only, inside the shell's workspace) and
/// a scratch folder to run its processes in.
fn misbehave_with(guest: &str, inside_workspace: &str) -> String {
    plugin_block(
        "misbehave",
        &format!(
            "[plugin.grants]\nprocess = true\n[plugin.grants.dirs]\n\"/scratch\" = {{ host = \"{{scratch}}\", write = true }}\n\"{guest}\" = {{ host = \"{{ws}}/{inside_workspace}\" }}\n"
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_plugins_grant_swapped_for_a_link_to_the_deployment_fails_its_next_process() {
    let deployment = Deployment::new("", &misbehave_with("/docs", "docs")).await;
    let root = deployment.root();
    let run = json!({"command": format!("cat {ws}/docs/readme.txt; cat {}/config.toml; ls {}", root.display(), root.display(), ws = root.join("workspace").display()), "timeout_ms": 5000});
    let output = deployment.run(&[("run", run.clone()), swap_docs_for(&root), ("run", run)]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    let results = results(&output);
    assert_eq!(results.len(), 3, "{results:?}");
    // Not vacuous: the grant worked before the swap.
    assert!(results[0]["output"].as_str().unwrap().contains("granted docs"), "{}", results[0]);
    assert!(results[1]["output"].as_str().unwrap().contains("swapped"), "{}", results[1]);
    let refused = results[2]["output"].as_str().unwrap();
    assert_eq!(results[2]["ok"], false, "{refused}");
    assert!(
        refused.contains(&format!(
            "{} is a symbolic link now (it was not when the config was loaded)",
            root.join("workspace/docs").display()
        )),
        "{refused}"
    );
    assert_nothing_read(&output, CONFIG_LINE);
    assert_nothing_read(&output, "sessions.db");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_two_levels_down_redirected_through_its_parent_fails_its_next_process() {
    let deployment = Deployment::new("", &misbehave_with("/deep", "a/docs")).await;
    let root = deployment.root();
    let outside = root.join("outside");
    let run = json!({"command": format!("ls {ws}/a/docs; cat {}/docs/secret.txt", outside.display(), ws = root.join("workspace").display()), "timeout_ms": 5000});
    let swap = json!({"command": format!("mv a a.old && ln -s {} a && echo swapped", outside.display())});
    let output = deployment.run(&[("run", run.clone()), ("shell", swap), ("run", run)]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    let results = results(&output);
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0]["ok"], true, "{}", results[0]);
    assert!(results[1]["output"].as_str().unwrap().contains("swapped"), "{}", results[1]);
    let refused = results[2]["output"].as_str().unwrap();
    assert_eq!(results[2]["ok"], false, "{refused}");
    assert!(
        refused.contains(&format!("{} is a symbolic link now", root.join("workspace/a").display())),
        "{refused}"
    );
    assert_nothing_read(&output, "top-secret");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wasi_grant_swapped_for_a_link_fails_the_next_call_instead_of_following_it() {
    let fs = plugin_block("fs", "[plugin.grants.dirs]\n\"/workspace\" = { host = \"{ws}/docs\" }\n");
    let deployment = Deployment::new("", &fs).await;
    let root = deployment.root();
    let output = deployment
        .run(&[
            ("read_file", json!({"path": "readme.txt"})),
            swap_docs_for(&root),
            ("read_file", json!({"path": "config.toml"})),
        ])
        .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    let results = results(&output);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0]["output"].as_str().unwrap().contains("granted docs"), "{}", results[0]);
    let refused = results[2]["output"].as_str().unwrap();
    assert_eq!(results[2]["ok"], false, "{refused}");
    assert!(refused.contains("cannot open granted folder /workspace"), "{refused}");
    assert!(
        refused.contains(&format!("{} is a symbolic link now", root.join("workspace/docs").display())),
        "{refused}"
    );
    assert_nothing_read(&output, CONFIG_LINE);
}
