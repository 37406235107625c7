//! Bad config files: each error names the file, the line and the field. Among them, grants
//! that would hand a plugin the host's own files, and caps set where they do not apply.

use std::path::Path;

use agent_host::Config;

fn load_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    Config::load(&path).expect_err("the config is refused").to_string()
}

#[test]
fn an_unknown_field_is_named_with_its_line() {
    let error = load_error("[model]\nprovider = \"openai\"\nmodle = \"x\"\n");
    assert!(error.contains("config.toml:3: `model.modle`: unknown field `modle`"), "{error}");
}

#[test]
fn a_missing_plugin_file_is_named_with_its_line() {
    let error = load_error("[agent]\nmax_iterations = 3\n\n[[plugin]]\npath = \"plugins/missing.wasm\"\n");
    assert!(error.contains("config.toml:5: `plugin[0].path`: no plugin at"), "{error}");
    assert!(error.contains("plugins/missing.wasm"), "{error}");
}

#[test]
fn builtin_with_path_names_both_keys() {
    let error = load_error("[[plugin]]\npath = \"plugins/todo\"\nbuiltin = \"todo\"\n");
    assert!(error.contains("config.toml:2: `plugin[0].path`"), "{error}");
    assert!(error.contains("sets `path` and `builtin`: a plugin comes from one source"), "{error}");
}

#[test]
fn a_wrong_type_is_named_with_its_line() {
    let error = load_error("[agent]\nmax_iterations = \"ten\"\n");
    assert!(error.contains("config.toml:2: `agent.max_iterations`: invalid type: string \"ten\""), "{error}");
}

#[test]
fn a_bad_enum_value_is_named() {
    let error = load_error("[model]\nprovider = \"carrier-pigeon\"\n");
    assert!(error.contains("config.toml:2: `model.provider`"), "{error}");
    assert!(error.contains("openai") && error.contains("scripted"), "lists the choices: {error}");
}

#[test]
fn toml_syntax_errors_say_where() {
    let error = load_error("[agent\nmax_iterations = 3\n");
    assert!(error.contains("config.toml:1"), "{error}");
}

#[test]
fn a_key_pasted_as_the_variable_name_is_refused_without_repeating_it() {
    let key = "sk-proj-pasted-by-mistake-0123";
    let error = load_error(&format!("[model]\nmodel = \"m\"\napi_key_env = \"{key}\"\n"));
    assert!(
        error.contains("config.toml:3: `model.api_key_env`: must be the name of the environment variable"),
        "{error}"
    );
    assert!(!error.contains(key), "the key is repeated: {error}");
}

/// The error for `text` as `config.toml` in `dir` (which holds `p.wasm`, a stand-in
/// component), or `Ok` when the config loads.
fn load_in(dir: &Path, text: &str) -> Result<(), String> {
    std::fs::write(dir.join("p.wasm"), b"stand-in").unwrap();
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    Config::load(&path).map(|_| ()).map_err(|error| error.to_string())
}

fn granted(host: &str) -> String {
    format!("[[plugin]]\npath = \"p.wasm\"\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{host}\" }}\n")
}

#[test]
fn a_grant_of_the_config_folder_is_refused_naming_plugin_grant_line_and_what_it_exposes() {
    let dir = tempfile::tempdir().unwrap();
    let error = load_in(dir.path(), &granted(".")).unwrap_err();
    assert!(
        error.contains("config.toml:4: `plugin[0].grants.dirs.\"/workspace\"`: plugin[0] (p.wasm)"),
        "{error}"
    );
    assert!(error.contains("contains the config file"), "{error}");
}

#[test]
fn a_grant_that_holds_the_store_the_cache_or_its_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("state/cache/sub")).unwrap();
    let paths = "[storage]\npath = \"data/s.db\"\n[runtime]\ncache_dir = \"state/cache\"\n";
    for (host, exposed) in [
        ("data", "contains the session store (every session's history and state)"),
        ("state", "contains the compile cache's key"),
        ("state/cache", "is the compile cache"),
        ("state/cache/sub", "is inside the compile cache"),
    ] {
        let error = load_in(dir.path(), &format!("{paths}{}", granted(host))).unwrap_err();
        assert!(error.contains(exposed), "{host}: {error}");
    }
}

#[test]
fn a_grant_of_a_plugin_source_through_a_link_or_of_another_plugins_component_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src-plugin")).unwrap();
    std::fs::write(dir.path().join("src-plugin/Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("src-plugin"), dir.path().join("work")).unwrap();
    let text = format!("[[plugin]]\npath = \"src-plugin\"\n\n{}", granted("work"));
    let error = load_in(dir.path(), &text).unwrap_err();
    assert!(error.contains("plugin[1] (p.wasm) may not be granted"), "{error}");
    assert!(error.contains("is the source folder of plugin[0]"), "{error}");

    std::fs::create_dir_all(dir.path().join("bin")).unwrap();
    std::fs::write(dir.path().join("bin/a.wasm"), b"stand-in").unwrap();
    let text = format!("[[plugin]]\npath = \"bin/a.wasm\"\n\n{}", granted("bin"));
    let error = load_in(dir.path(), &text).unwrap_err();
    assert!(error.contains("contains the component of plugin[0]"), "{error}");
}

#[test]
fn a_workspace_that_merely_holds_an_unrelated_folder_is_granted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workspace/sub")).unwrap();
    load_in(dir.path(), &granted("workspace")).unwrap();
    load_in(dir.path(), &granted("workspace/sub")).unwrap();
}

#[test]
fn the_endpoint_caps_are_refused_in_a_plugin_table_and_a_zero_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[[plugin]]\npath = \"p.wasm\"\n[plugin.limits]\nstate_keys = 10\nendpoint_body_mb = 1\n";
    let error = load_in(dir.path(), text).unwrap_err();
    assert!(
        error.contains("config.toml:5: `plugin[0].limits.endpoint_body_mb`: caps the model endpoint"),
        "{error}"
    );
    assert!(error.contains("set it under [model] (`model.endpoint_body_mb`)"), "{error}");
    let error = load_in(dir.path(), "[model]\nsse_line_kb = 0\n").unwrap_err();
    assert!(error.contains("config.toml:2: `model.sse_line_kb`: must be at least 1 (KiB)"), "{error}");
    let error = load_in(dir.path(), "[runtime.limits]\nsse_line_kb = 0\n").unwrap_err();
    assert!(error.contains("config.toml:2: `runtime.limits.sse_line_kb`: must be at least 1"), "{error}");
    load_in(
        dir.path(),
        "[model]\nendpoint_body_mb = 8\nsse_line_kb = 64\n[runtime.limits]\nstate_total_kb = 1\n",
    )
    .unwrap();
}

/// The file at `text` as `config.toml` in `dir`, loaded.
fn loaded_in(dir: &Path, text: &str) -> Config {
    std::fs::write(dir.join("p.wasm"), b"stand-in").unwrap();
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    Config::load(&path).unwrap()
}

#[test]
fn the_endpoint_caps_in_their_old_place_load_with_a_note_naming_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let old =
        loaded_in(dir.path(), "[runtime.limits]\nstate_keys = 10\nendpoint_body_mb = 8\nsse_line_kb = 64\n");
    assert_eq!((old.model.endpoint_body_mb, old.model.sse_line_kb), (8, 64));
    assert_eq!((old.model.max_body_bytes(), old.model.max_event_bytes()), (8 << 20, 64 << 10));
    assert_eq!(old.notes.len(), 2, "{:?}", old.notes);
    assert!(
        old.notes[0].ends_with(
            "config.toml:3: `runtime.limits.endpoint_body_mb` is read as `model.endpoint_body_mb`, where it \
             belongs now: move it under [model]"
        ),
        "{:?}",
        old.notes
    );
    assert!(old.notes[1].contains(":4: `runtime.limits.sse_line_kb` is read as `model.sse_line_kb`"));

    let new = loaded_in(dir.path(), "[model]\nendpoint_body_mb = 8\n");
    assert_eq!((new.model.endpoint_body_mb, new.model.sse_line_kb), (8, 1024));
    assert!(new.notes.is_empty(), "{:?}", new.notes);

    let both = load_in(dir.path(), "[model]\nsse_line_kb = 8\n[runtime]\nlimits = { sse_line_kb = 9 }\n");
    let error = both.unwrap_err();
    assert!(
        error.contains(
            "config.toml:4: `runtime.limits.sse_line_kb`: is `model.sse_line_kb` now, which this file sets too"
        ),
        "{error}"
    );
}

#[tokio::test]
async fn a_reload_that_would_grant_the_store_is_refused_and_the_old_set_keeps_serving() {
    use crate::support::{FakeModel, TestHost, config_text, plugin_block};

    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("misbehave", "")).await;
    let store_dir = test.dir.path().display().to_string();
    let grant = format!("[plugin.grants.dirs]\n\"/data\" = {{ host = \"{store_dir}\" }}\n");
    let config = config_text(&model.url(), &plugin_block("misbehave", &grant));
    std::fs::write(test.dir.path().join("config.toml"), config).unwrap();
    let error = test.host.reload(&*test.events).await.expect_err("the reload is refused").to_string();
    assert!(error.contains("plugin[0]") && error.contains("contains the config file"), "{error}");

    let session = test.session();
    let mut session = session.lock().await;
    let echo = serde_json::json!({"text": "old set"});
    let result = test.host.invoke_tool(&mut session, "echo", &echo, &*test.events).await.unwrap();
    assert_eq!(result.output, "old set");
}

/// `[[plugin]]` `p.wasm` with the grants given, one `"guest" = { host, write }` per line.
fn grants(entries: &[(&str, &str, bool)]) -> String {
    let mut text = String::from("[[plugin]]\npath = \"p.wasm\"\n[plugin.grants.dirs]\n");
    for (guest, host, write) in entries {
        text.push_str(&format!("\"{guest}\" = {{ host = \"{host}\", write = {write} }}\n"));
    }
    text
}

#[test]
fn a_grant_inside_a_writable_grant_of_the_same_plugin_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("workspace/a/docs")).unwrap();
    let ws = root.join("workspace");
    let text = grants(&[("/workspace", "workspace", true), ("/docs", "workspace/docs", false)]);
    let error = load_in(dir.path(), &text).unwrap_err();
    assert!(
        error.contains(&format!(
            "config.toml:5: `plugin[0].grants.dirs.\"/docs\"`: plugin[0] (p.wasm): the read-only grant \
             \"/docs\" ({ws}/docs) is inside the writable grant \"/workspace\" ({ws}); a plugin that \
             writes there could replace the folder, or one on its way, with a link",
            ws = ws.display()
        )),
        "{error}"
    );
    // Two levels down, through a link to the workspace, writable, or the same folder twice.
    std::os::unix::fs::symlink(&ws, root.join("ws-link")).unwrap();
    for (inner, write, relation) in [
        ("ws-link/a/docs", false, "inside"),
        ("workspace/a", true, "inside"),
        ("./workspace/", false, "the same folder as"),
    ] {
        let text = grants(&[("/workspace", "workspace", true), ("/inner", inner, write)]);
        let error = load_in(dir.path(), &text).unwrap_err();
        let how = if write { "writable" } else { "read-only" };
        assert!(error.contains(&format!("the {how} grant \"/inner\"")), "{inner}: {error}");
        assert!(error.contains(&format!("{relation} the writable grant \"/workspace\"")), "{inner}: {error}");
    }
}

#[test]
fn grants_that_nest_only_in_read_only_ones_or_across_plugins_load() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workspace/docs")).unwrap();
    load_in(dir.path(), &grants(&[("/src", "workspace", false), ("/docs", "workspace/docs", false)]))
        .unwrap();
    load_in(dir.path(), &grants(&[("/src", "workspace", false), ("/out", "workspace/docs", true)])).unwrap();
    let two = format!(
        "{}\n{}",
        grants(&[("/workspace", "workspace", true)]),
        grants(&[("/docs", "workspace/docs", false)])
    );
    load_in(dir.path(), &two).unwrap();
}

/// A plugin crate folder `name` in `dir` with `manifest_tail` after its `[package]`.
fn crate_folder(dir: &Path, name: &str, manifest_tail: &str) {
    std::fs::create_dir_all(dir.join(name).join("src")).unwrap();
    std::fs::write(dir.join(name).join("src/lib.rs"), "").unwrap();
    std::fs::write(
        dir.join(name).join("Cargo.toml"),
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{manifest_tail}"),
    )
    .unwrap();
}

#[test]
fn a_writable_grant_over_a_plugins_path_dependency_or_build_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    crate_folder(&root, "shared", "");
    crate_folder(&root, "tool", "[dependencies]\nshared = { path = \"../shared\" }\n");
    let plugin = "[[plugin]]\npath = \"tool\"\n\n";
    let error =
        load_in(dir.path(), &format!("{plugin}{}", grants(&[("/shared", "shared", true)]))).unwrap_err();
    assert!(
        error.contains(&format!(
            "config.toml:7: `plugin[1].grants.dirs.\"/shared\"`: plugin[1] (p.wasm) may not be granted {} \
             writable: that folder is a local package plugin[0]'s build compiles",
            root.join("shared").display()
        )),
        "{error}"
    );
    assert!(error.contains("would run code as the operator"), "{error}");
    // Read-only, it is only source to read.
    load_in(dir.path(), &format!("{plugin}{}", grants(&[("/shared", "shared", false)]))).unwrap();

    // A workspace member builds into the workspace's target folder, outside its own.
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"tool\", \"shared\"]\nresolver = \"2\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("target/wasm32-wasip2")).unwrap();
    let error =
        load_in(dir.path(), &format!("{plugin}{}", grants(&[("/out", "target/wasm32-wasip2", true)])))
            .unwrap_err();
    assert!(
        error.contains(&format!(
            "that folder is inside the folder cargo builds plugin[0] into ({})",
            root.join("target").display()
        )),
        "{error}"
    );
}

/// `agent-host --config <dir>/config.toml --check` with `env` set and `CARGO` unset, as
/// an operator's shell runs it.
fn check_with(dir: &Path, text: &str, env: &[(&str, std::ffi::OsString)]) -> std::process::Output {
    std::fs::write(dir.join("p.wasm"), b"stand-in").unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command
        .arg("--config")
        .arg(dir.join("config.toml"))
        .arg("check")
        .env_remove("CARGO")
        .env("NO_COLOR", "1");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("the binary runs")
}

#[test]
fn check_refuses_a_writable_grant_over_the_toolchains_the_host_builds_plugins_with() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for folder in ["cargo-home/bin", "rustup-home/toolchains", "tools", "node-tools", "toolchains/typescript"]
    {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    std::fs::write(root.join("tools/cargo"), "#!/bin/sh\n").unwrap();
    std::fs::write(root.join("node-tools/node"), "#!/bin/sh\n").unwrap();
    let path = std::env::join_paths(
        [root.join("tools"), root.join("node-tools")]
            .into_iter()
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let env = [
        ("CARGO_HOME", root.join("cargo-home").into_os_string()),
        ("RUSTUP_HOME", root.join("rustup-home").into_os_string()),
        ("AGENT_HOST_TOOLCHAINS", root.join("toolchains").into_os_string()),
        ("PATH", path),
    ];
    for (host, exposed) in [
        (
            "cargo-home",
            format!(
                "is CARGO_HOME, the toolchain the host builds plugins with ({})",
                root.join("cargo-home").display()
            ),
        ),
        ("cargo-home/bin", "is inside CARGO_HOME".into()),
        ("rustup-home/toolchains", "is inside RUSTUP_HOME".into()),
        ("tools", format!("contains `cargo` as the host runs it ({})", root.join("tools/cargo").display())),
        (
            "node-tools",
            format!("contains `node` as the host runs it ({})", root.join("node-tools/node").display()),
        ),
        (
            "toolchains",
            format!(
                "is the toolchains folder, whose tools build Python and TypeScript plugins ({})",
                root.join("toolchains").display()
            ),
        ),
        ("toolchains/typescript", "is inside the toolchains folder".into()),
    ] {
        let output = check_with(dir.path(), &grants(&[("/workspace", host, true)]), &env);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{host}: {stderr}");
        assert!(
            stderr.contains("config.toml:4: `plugin[0].grants.dirs.\"/workspace\"`: plugin[0] (p.wasm)"),
            "{host}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("may not be granted {} writable", root.join(host).display())),
            "{host}: {stderr}"
        );
        assert!(stderr.contains(&exposed), "{host}: {stderr}");
    }
    // Read-only, the toolchain is only visible; --check goes on past the config.
    let output = check_with(dir.path(), &grants(&[("/workspace", "cargo-home", false)]), &env);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("may not be granted"), "{stderr}");
}

#[test]
fn serves_plugin_commands_are_names_without_the_slash_and_the_session_cap_is_at_least_one() {
    let serve = "[serve]\ntokens = { alice = \"AGENT_HOST_T_ALICE\" }\n";
    let error = load_error(&format!("{serve}plugin_commands = [\"/mode\"]\n"));
    assert!(
        error.contains("config.toml:3: `serve.plugin_commands`: `/mode` is not a command's name"),
        "{error}"
    );
    assert!(error.contains("write `\"mode\"`, without the slash"), "{error}");
    let error = load_error(&format!("{serve}plugin_commands = [\"mode execute\"]\n"));
    assert!(error.contains("`serve.plugin_commands`: `mode execute` is not a command's name"), "{error}");
    let error = load_error(&format!("{serve}max_sessions_per_principal = 0\n"));
    assert!(
        error.contains("config.toml:3: `serve.max_sessions_per_principal`: must be at least 1"),
        "{error}"
    );
}
