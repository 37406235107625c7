//! Reading `config.toml` and turning serde's complaints into errors that say where.

use std::path::Path;

use super::locate::{field_at, line_at};
use super::{Config, ConfigError, ConfigSource, Provider};

pub(super) fn load_file(path: &Path) -> Result<Config, ConfigError> {
    let bytes = std::fs::read(path).map_err(|error| ConfigError {
        file: path.to_path_buf(),
        line: None,
        field: None,
        message: format!("cannot read the config file: {error}"),
    })?;
    let text = String::from_utf8(bytes).map_err(|error| {
        // Name the line of the first bad byte: the rest of the file may be fine.
        let good = &error.as_bytes()[..error.utf8_error().valid_up_to()];
        ConfigError {
            file: path.to_path_buf(),
            line: std::str::from_utf8(good).ok().map(|good| line_at(good, good.len())),
            field: None,
            message: format!("the config file is not UTF-8 text: {}", error.utf8_error()),
        }
    })?;
    // Absolute, so relative paths in the file resolve the same from any working folder.
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    parse(&text, &path)
}

pub(super) fn parse(text: &str, file: &Path) -> Result<Config, ConfigError> {
    let mut config: Config = toml::from_str(text).map_err(|error| {
        let at = error.span().map(|span| span.start);
        ConfigError {
            file: file.to_path_buf(),
            line: at.map(|offset| line_at(text, offset)),
            field: at.and_then(|offset| field_at(text, offset)),
            message: error.message().trim().to_owned(),
        }
    })?;
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    config.source = ConfigSource { file: file.to_path_buf(), dir, text: text.into() };
    move_endpoint_caps(&mut config)?;
    super::grants::resolve(&mut config);
    super::registries::resolve(&mut config);
    validate(&config)?;
    Ok(config)
}

/// `[model]`'s endpoint caps where `[runtime.limits]` once held them: read into `[model]`,
/// with a note naming the new spelling; refused when `[model]` sets them too.
fn move_endpoint_caps(config: &mut Config) -> Result<(), ConfigError> {
    let written: Vec<_> = config.runtime.written_limits.endpoint_caps_set().collect();
    for (key, value) in written {
        let (old, new) = (format!("runtime.limits.{key}"), format!("model.{key}"));
        if config.line_of(&new).is_some() {
            return Err(
                config.error(old, format!("is `{new}` now, which this file sets too: remove this one"))
            );
        }
        let line = config.line_of(&old).map(|line| format!(":{line}")).unwrap_or_default();
        config.notes.push(format!(
            "{}{line}: `{old}` is read as `{new}`, where it belongs now: move it under [model]",
            config.source.file.display()
        ));
        match key {
            "endpoint_body_mb" => config.model.endpoint_body_mb = value,
            _ => config.model.sse_line_kb = value,
        }
    }
    Ok(())
}

/// Checks what serde cannot: values in range, files that exist, settings that go together.
fn validate(config: &Config) -> Result<(), ConfigError> {
    let whole = |field: &str, message: String| config.error(field, message);
    if config.agent.max_iterations == 0 {
        return Err(whole("agent.max_iterations", "must be at least 1".into()));
    }
    if config.agent.max_turn_tokens == Some(0) {
        return Err(whole("agent.max_turn_tokens", "must be at least 1 (leave it out for no cap)".into()));
    }
    if config.agent.max_turn_secs == Some(0) {
        return Err(whole("agent.max_turn_secs", "must be at least 1 (leave it out for no cap)".into()));
    }
    check_limits(config, &config.runtime.limits, "runtime.limits")?;
    let compaction = config.compaction;
    for (key, percent) in
        [("trigger_percent", compaction.trigger_percent), ("target_percent", compaction.target_percent)]
    {
        if !(1..=100).contains(&percent) {
            return Err(whole(
                &format!("compaction.{key}"),
                format!("must be 1 to 100 (percent), not {percent}"),
            ));
        }
    }
    if compaction.target_percent >= compaction.trigger_percent {
        let (trigger, target) = (compaction.trigger_percent, compaction.target_percent);
        let why = format!("a truncation to {target}% would start the next compaction at once");
        // The setting the file wrote is the one to blame: a trigger set below the default
        // target names the trigger's line.
        return Err(if config.line_of("compaction.target_percent").is_some() {
            whole("compaction.target_percent", format!("must be below `trigger_percent` ({trigger}): {why}"))
        } else {
            whole(
                "compaction.trigger_percent",
                format!("must be above `target_percent` ({target}, its default): {why}"),
            )
        });
    }
    if !is_variable_name(config.model.key_env()) {
        // The value is not repeated: a key pasted here by mistake must not reach a log.
        return Err(whole(
            "model.api_key_env",
            "must be the name of the environment variable that holds the API key (letters, digits \
             and `_`, such as OPENAI_API_KEY), not the key itself"
                .into(),
        ));
    }
    check_model(config)?;
    if config.model.provider == Provider::Scripted {
        let Some(script) = &config.model.script else {
            // `script` is missing, so name the line that asked for it.
            return Err(config.error_near(
                "model.script",
                "model.provider",
                "provider = \"scripted\" needs `script`, the file of model turns to replay",
            ));
        };
        let resolved = config.resolve(script.get_ref());
        if !resolved.is_file() {
            return Err(config.error_at(
                script.span(),
                "model.script",
                format!("no script file at {}", resolved.display()),
            ));
        }
    }
    super::plugin_origin::check_origins(config)?;
    for (index, plugin) in config.plugins.iter().enumerate() {
        let field = format!("plugin[{index}].path");
        if let Some(path) = plugin.local_path() {
            let resolved = config.resolve(path);
            if plugin.enabled && super::PluginSource::of(&resolved).is_none() {
                return Err(config.error_at(
                    plugin.origin_span(),
                    field,
                    format!(
                        "no plugin at {}: expected {}",
                        resolved.display(),
                        super::PluginSource::EXPECTED
                    ),
                ));
            }
        }
        if let Some((key, _)) = plugin.limits.endpoint_caps_set().next() {
            return Err(whole(
                &format!("plugin[{index}].limits.{key}"),
                format!("caps the model endpoint, not a plugin: set it under [model] (`model.{key}`)"),
            ));
        }
        if plugin.limits.timeout_ms.is_some() && plugin.limits.process_call_timeout_ms.is_some() {
            return Err(whole(
                &format!("plugin[{index}].limits.process_call_timeout_ms"),
                "set `timeout_ms` or `process_call_timeout_ms` for a plugin, not both: for a plugin \
                 granted `process`, its own `timeout_ms` takes the other's place"
                    .into(),
            ));
        }
        let limits = plugin.call_limits(config.runtime.limits);
        check_limits(config, &limits, &format!("plugin[{index}].limits"))?;
        check_model_grant(config, &plugin.grants, index)?;
    }
    super::grants::check(config)?;
    super::mcp::check(config)?;
    super::serve::check(config)?;
    super::telemetry::check(config)?;
    super::registries::check(config)?;
    super::storage::check(config)?;
    Ok(())
}

fn check_limits(config: &Config, limits: &super::Limits, table: &str) -> Result<(), ConfigError> {
    // The plugin's own value, else the inherited `[runtime.limits]` one.
    let error = |key: &str, message: &str| {
        config.error_near(format!("{table}.{key}"), &format!("runtime.limits.{key}"), message)
    };
    if limits.memory_mb == 0 || limits.memory_mb > super::MAX_MEMORY_MB {
        return Err(error("memory_mb", &format!("must be between 1 and {} (MiB)", super::MAX_MEMORY_MB)));
    }
    for (key, value, unit) in limits.each() {
        if value == 0 {
            return Err(error(key, &format!("must be at least 1 ({unit})")));
        }
    }
    Ok(())
}

/// A plugin's model budgets: each at least one token, a call's within the session's.
fn check_model_grant(config: &Config, grants: &super::Grants, index: usize) -> Result<(), ConfigError> {
    let error = |key: &str, message: String| config.error(format!("plugin[{index}].grants.{key}"), message);
    if grants.model_tokens_per_call == 0 {
        return Err(error("model_tokens_per_call", "must be at least 1 (tokens)".into()));
    }
    if grants.model_tokens_per_session == 0 {
        return Err(error("model_tokens_per_session", "must be at least 1 (tokens)".into()));
    }
    if u64::from(grants.model_tokens_per_call) > grants.model_tokens_per_session {
        return Err(error(
            "model_tokens_per_call",
            format!(
                "{} is more than the whole session's budget (`model_tokens_per_session` = {})",
                grants.model_tokens_per_call, grants.model_tokens_per_session
            ),
        ));
    }
    Ok(())
}

/// `[model]` settings that serde takes but that cannot work together.
fn check_model(config: &Config) -> Result<(), ConfigError> {
    let model = &config.model;
    let whole = |field: &str, message: String| config.error(field, message);
    for (field, secs) in [
        ("model.timeout_secs", model.timeout_secs),
        ("model.first_byte_timeout_secs", model.first_byte_timeout_secs),
        ("model.idle_timeout_secs", model.idle_timeout_secs),
    ] {
        if secs == 0 {
            return Err(whole(field, "must be at least 1 second".into()));
        }
    }
    for (key, value, unit) in
        [("endpoint_body_mb", model.endpoint_body_mb, "MiB"), ("sse_line_kb", model.sse_line_kb, "KiB")]
    {
        if value == 0 {
            // Named as the file spells it: the old place, when it was read from there.
            let old = config.runtime.written_limits.endpoint_caps_set().any(|(set, _)| set == key);
            let field = if old { format!("runtime.limits.{key}") } else { format!("model.{key}") };
            return Err(config.error(field, format!("must be at least 1 ({unit})")));
        }
    }
    if model.max_output_tokens == Some(0) {
        return Err(whole("model.max_output_tokens", "must be at least 1 token".into()));
    }
    if model.context_window == Some(0) {
        return Err(whole("model.context_window", "must be at least 1 token".into()));
    }
    if let Some(window) = model.window()
        && model.output_reserve() >= window
    {
        let output = model.output_reserve();
        return Err(match (model.max_output_tokens, model.context_window) {
            (Some(_), Some(_)) => whole(
                "model.max_output_tokens",
                format!("{output} leaves no room for the prompt in a context_window of {window} tokens"),
            ),
            (Some(_), None) => whole(
                "model.max_output_tokens",
                format!(
                    "{output} leaves no room for the prompt in the {window}-token window of `{}` models \
                     (set context_window if this one's is larger)",
                    model.known().map_or("", |known| known.family)
                ),
            ),
            // Only a default reserve can meet a window the file sets: the known ones fit theirs.
            (None, _) => whole(
                "model.context_window",
                format!(
                    "{window} leaves no room for the prompt beside the {output} tokens a reply may take \
                     by default; set max_output_tokens below it"
                ),
            ),
        });
    }
    for (header, variable) in &model.headers {
        let field = format!("model.headers.{header}");
        if hyper::header::HeaderName::from_bytes(header.as_bytes()).is_err() {
            return Err(whole(&field, format!("`{header}` is not an HTTP header name")));
        }
        if !is_variable_name(variable) {
            // Like the key: the value is not repeated, in case a secret was pasted here.
            return Err(whole(
                &field,
                "must be the name of the environment variable that holds the header's value, not \
                 the value itself"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// A portable environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_variable_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> ConfigError {
        parse(text, Path::new("/tmp/agent-host-test/config.toml")).unwrap_err()
    }

    #[test]
    fn unknown_field_names_line_and_field() {
        let error = error("[agent]\nmax_iterations = 3\nmax_iteratons = 4\n");
        assert_eq!(error.line, Some(3));
        assert_eq!(error.field.as_deref(), Some("agent.max_iteratons"));
        assert!(error.message.contains("unknown field"), "{error}");
    }

    #[test]
    fn wrong_type_in_a_plugin_table_names_the_entry() {
        let text = "[[plugin]]\npath = \"a.wasm\"\n\n[[plugin]]\npath = \"b.wasm\"\n[plugin.limits]\ntimeout_ms = \"soon\"\n";
        let error = error(text);
        assert_eq!(error.line, Some(7));
        assert_eq!(error.field.as_deref(), Some("plugin[1].limits.timeout_ms"));
        assert!(error.message.contains("invalid type"), "{error}");
        assert!(error.to_string().starts_with("/tmp/agent-host-test/config.toml:7: "), "{error}");
    }

    #[test]
    fn a_missing_field_names_its_entry_and_a_typo_under_a_quoted_key_its_whole_path() {
        let missing = error("[[plugin]]\npath = \"/\"\nenabled = false\n\n[[plugin]]\nenabled = false\n");
        assert_eq!((missing.line, missing.field.as_deref()), (Some(5), Some("plugin[1]")), "{missing}");
        assert!(missing.message.contains("names no component"), "{missing}");
        assert!(missing.message.contains("`builtin = \"NAME\"`"), "{missing}");
        let both = error("[[plugin]]\npath = \"/\"\nbuiltin = \"x\"\n");
        assert_eq!((both.line, both.field.as_deref()), (Some(2), Some("plugin[0].path")), "{both}");
        assert!(both.message.contains("sets `path` and `builtin`"), "{both}");
        let text = "[[plugin]]\npath = \"/\"\nenabled = false\n[plugin.grants.dirs]\n\"/data.d\" = { host = \"d\", writ = true }\n";
        let typo = error(text);
        assert_eq!(
            (typo.line, typo.field.as_deref()),
            (Some(5), Some("plugin[0].grants.dirs.\"/data.d\".writ")),
            "{typo}"
        );
    }

    #[test]
    fn missing_plugin_file_names_its_line() {
        let error = error("[model]\nprovider = \"openai\"\n\n[[plugin]]\npath = \"nowhere/x.wasm\"\n");
        assert_eq!(error.line, Some(5));
        assert_eq!(error.field.as_deref(), Some("plugin[0].path"));
        assert!(error.message.contains("nowhere/x.wasm"), "{error}");
    }

    #[test]
    fn compaction_shares_out_of_range_or_in_the_wrong_order_name_the_field() {
        let zero = error("[compaction]\ntrigger_percent = 0\n");
        assert_eq!(zero.field.as_deref(), Some("compaction.trigger_percent"));
        assert_eq!(zero.line, Some(2));
        let order = error("[compaction]\ntrigger_percent = 60\ntarget_percent = 70\n");
        assert_eq!(order.field.as_deref(), Some("compaction.target_percent"));
        assert_eq!(order.line, Some(3));
        assert!(order.message.contains("below `trigger_percent` (60)"), "{order}");
        // Found by the config fuzzer: a trigger below the default target, which the file does
        // not set, names the trigger's line.
        let low = error("[compaction]\nenabled = true\ntrigger_percent = 8\n");
        assert_eq!((low.field.as_deref(), low.line), (Some("compaction.trigger_percent"), Some(3)), "{low}");
        assert!(low.message.contains("above `target_percent` (50, its default)"), "{low}");
    }

    #[test]
    fn out_of_range_limit_is_refused() {
        let error = error("[runtime.limits]\nmemory_mb = 0\n");
        assert_eq!(error.field.as_deref(), Some("runtime.limits.memory_mb"));
        assert_eq!(error.line, Some(2));
    }

    #[test]
    fn text_that_is_not_utf8_names_the_line_of_the_bad_byte() {
        // Found by fuzzing (tests/e2e/fuzz/config.rs): the error named no line.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, b"[agent]\nmax_iterations = 3\ninstructions = \"caf\xe9\"\n").unwrap();
        let error = load_file(&file).unwrap_err();
        assert_eq!(error.line, Some(3), "{error}");
        assert!(error.to_string().contains("config.toml:3: the config file is not UTF-8"), "{error}");
    }

    #[test]
    fn a_limit_in_an_inline_table_names_its_own_line() {
        // Found by fuzzing (tests/e2e/fuzz/config.rs): the line was looked up by key at the
        // start of a line, so a value in an inline table had none, and a value under a later
        // table got the line of the first table with that key.
        let inline = error("[runtime]\nlimits = { memory_mb = 0 }\n");
        assert_eq!((inline.line, inline.field.as_deref()), (Some(2), Some("runtime.limits.memory_mb")));
        let text = "[runtime.limits]\nmemory_mb = 64\n\n[[plugin]]\npath = \"/\"\nenabled = false\nlimits = { timeout_ms = 5, memory_mb = 2048 }\n";
        let later = error(text);
        assert_eq!((later.line, later.field.as_deref()), (Some(7), Some("plugin[0].limits.memory_mb")));
    }

    #[test]
    fn a_missing_script_names_the_provider_line() {
        // Noticed while widening the fuzzed values: the error named no line, as the missing
        // key has none.
        let error = error("[agent]\nmax_iterations = 2\n[model]\nprovider = \"scripted\"\n");
        assert_eq!((error.line, error.field.as_deref()), (Some(4), Some("model.script")), "{error}");
    }

    #[test]
    fn process_limits_and_the_sandbox_mode_are_read_and_checked() {
        let text = "[runtime]\nsandbox = \"none\"\n[runtime.limits]\nprocess_cpu_secs = 5\n\n[[plugin]]\npath = \"/\"\nenabled = false\n[plugin.limits]\nprocess_file_mb = 0\n";
        let zero = error(text);
        assert_eq!((zero.line, zero.field.as_deref()), (Some(10), Some("plugin[0].limits.process_file_mb")));
        assert!(zero.message.contains("at least 1"), "{zero}");
        let config = parse(
            "[runtime]\nsandbox = \"none\"\n[runtime.limits]\nprocess_cpu_secs = 5\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(config.runtime.sandbox, super::super::SandboxMode::None);
        assert_eq!(config.runtime.limits.process_cpu_secs, 5);
        assert_eq!(config.runtime.limits.process_memory_mb, 4096);
        let wrong = error("[runtime]\nsandbox = \"bubble\"\n");
        assert_eq!((wrong.line, wrong.field.as_deref()), (Some(2), Some("runtime.sandbox")), "{wrong}");
    }

    #[test]
    fn a_plugin_setting_both_call_deadlines_is_refused_naming_the_one_that_would_not_count() {
        let text = "[[plugin]]\npath = \"/\"\nenabled = false\n[plugin.limits]\ntimeout_ms = 60000\nprocess_call_timeout_ms = 900000\n";
        let both = error(text);
        assert_eq!(
            (both.line, both.field.as_deref()),
            (Some(6), Some("plugin[0].limits.process_call_timeout_ms"))
        );
        assert!(both.message.contains("not both"), "{both}");
        let zero = error("[runtime.limits]\nprocess_call_timeout_ms = 0\n");
        assert_eq!(zero.field.as_deref(), Some("runtime.limits.process_call_timeout_ms"), "{zero}");
        // Either alone is read; the runtime's applies to every plugin granted `process`.
        let config =
            parse("[runtime.limits]\nprocess_call_timeout_ms = 900000\n", Path::new("c.toml")).unwrap();
        assert_eq!(config.runtime.limits.process_call_timeout_ms, 900_000);
    }

    #[test]
    fn model_grants_are_read_with_their_default_budgets_and_checked() {
        let text = "[[plugin]]\npath = \"/\"\nenabled = false\n[plugin.grants]\nmodel = true\nmodel_tokens_per_call = 900\n";
        let grants = &parse(text, Path::new("c.toml")).unwrap().plugins[0].grants;
        assert!(grants.model);
        assert_eq!((grants.model_tokens_per_call, grants.model_tokens_per_session), (900, 50_000));

        let zero = error(
            "[[plugin]]\npath = \"/\"\nenabled = false\n[plugin.grants]\nmodel = true\nmodel_tokens_per_session = 0\n",
        );
        assert_eq!(
            (zero.line, zero.field.as_deref()),
            (Some(6), Some("plugin[0].grants.model_tokens_per_session")),
            "{zero}"
        );
        let over = error(
            "[[plugin]]\npath = \"/\"\nenabled = false\n[plugin.grants]\nmodel_tokens_per_call = 600\nmodel_tokens_per_session = 500\n",
        );
        assert_eq!(
            (over.line, over.field.as_deref()),
            (Some(5), Some("plugin[0].grants.model_tokens_per_call"))
        );
        assert!(over.message.contains("600") && over.message.contains("500"), "{over}");
    }

    #[test]
    fn a_known_model_defaults_its_window_and_reply_budget_and_a_set_value_wins() {
        let config = |model: &str| parse(&format!("[model]\n{model}\n"), Path::new("c.toml")).unwrap().model;
        let known = config("model = \"gpt-4o-mini\"");
        assert_eq!((known.window(), known.output_reserve()), (Some(128_000), 16_384));
        assert_eq!(known.max_output_tokens, None, "a default is never sent");
        let set = config("model = \"gpt-4o-mini\"\ncontext_window = 32000\nmax_output_tokens = 1000");
        assert_eq!((set.window(), set.output_reserve()), (Some(32_000), 1_000));
        let unknown = config("model = \"my-finetune\"");
        assert_eq!((unknown.window(), unknown.output_reserve()), (None, 0));
        let messages = config("provider = \"anthropic\"\nmodel = \"claude-sonnet-4-5\"");
        assert_eq!(
            (messages.window(), messages.output_reserve()),
            (Some(200_000), super::super::ANTHROPIC_MAX_TOKENS),
            "the reserve is what a Messages request asks for"
        );
    }

    #[test]
    fn a_reply_budget_that_fills_the_window_names_the_field_that_was_set() {
        let both = error("[model]\ncontext_window = 1000\nmax_output_tokens = 1000\n");
        assert_eq!((both.line, both.field.as_deref()), (Some(3), Some("model.max_output_tokens")));
        assert!(
            both.message.contains("1000 leaves no room for the prompt in a context_window of 1000"),
            "{both}"
        );
        let defaulted_window = error("[model]\nmodel = \"gpt-4o\"\nmax_output_tokens = 200000\n");
        assert_eq!(defaulted_window.field.as_deref(), Some("model.max_output_tokens"), "{defaulted_window}");
        assert!(
            defaulted_window.message.contains("the 128000-token window of `gpt-4o` models"),
            "{defaulted_window}"
        );
        let defaulted_reserve =
            error("[model]\nprovider = \"anthropic\"\nmodel = \"x\"\ncontext_window = 4096\n");
        assert_eq!(
            (defaulted_reserve.line, defaulted_reserve.field.as_deref()),
            (Some(4), Some("model.context_window"))
        );
        assert!(defaulted_reserve.message.contains("beside the 8192 tokens"), "{defaulted_reserve}");
        let zero = error("[model]\ncontext_window = 0\n");
        assert_eq!((zero.line, zero.message.as_str()), (Some(2), "must be at least 1 token"));
    }

    #[test]
    fn defaults_fill_an_empty_file() {
        let config = parse("", Path::new("config.toml")).unwrap();
        assert_eq!(config.agent.max_iterations, 10);
        assert_eq!(config.runtime.limits.memory_mb, 64);
        assert!(config.plugins.is_empty());
    }
}
