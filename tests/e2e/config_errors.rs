//! Bad config files: each error names the file, the line and the field.

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
