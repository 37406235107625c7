//! Hot reload in the console, under a real pseudo-terminal: its notices each drawn on lines of
//! their own above the prompt, the line being typed kept below them as it was; a rejected
//! change said once however long the console then sits idle; and an idle console on the
//! shipped config draws nothing and spends next to no CPU.

use std::path::Path;
use std::time::Duration;

use crate::idle_reload::{IDLE, cpu_seconds, shipped_deployment};
use crate::support::console::{Console, prompt_line};
use crate::support::{FakeModel, config_text, plugin_wasm};

/// A deployment whose misbehave component is a private copy, configured with `prefix`.
fn deployment(model: &FakeModel, prefix: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let component = dir.path().join("misbehave.wasm");
    std::fs::copy(plugin_wasm("misbehave"), &component).unwrap();
    let block =
        format!("[[plugin]]\npath = \"{}\"\n[plugin.config]\nprefix = \"{prefix}\"\n", component.display());
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &block)).unwrap();
    dir
}

/// Replaces `from` with `to` in the file at `path`, as an editor's save would.
fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no `{from}`", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// The index of the only row of `rows` that contains `text`; fails when none or several do.
fn only_row(rows: &[String], text: &str) -> usize {
    let found: Vec<usize> =
        rows.iter().enumerate().filter(|(_, row)| row.contains(text)).map(|(i, _)| i).collect();
    assert_eq!(found.len(), 1, "`{text}` on exactly one row:\n{}", rows.join("\n"));
    found[0]
}

/// The row the prompt is on, and that it still holds what was typed.
fn prompt_row(rows: &[String], typed: &str) -> usize {
    let row = rows.iter().rposition(|row| row.contains('>')).expect("a prompt");
    assert!(
        rows[row].trim_end().ends_with(&format!("> {typed}")),
        "the typed line kept:\n{}",
        rows.join("\n")
    );
    row
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_notices_are_drawn_above_the_prompt_and_a_rejection_is_said_once() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, "v1 ");
    let config = dir.path().join("config.toml");
    tokio::task::spawn_blocking(move || {
        let typed = "half a thought";
        let mut console = Console::start("reload-notices", &config, &[]);
        console.wait_for_prompt("prompt");
        console.type_until_shown(typed);

        // A typo saved while the console waits at the prompt, half a line typed.
        edit(&config, "max_iterations = 6", "max_iterations = 6 6");
        console.wait_for("rejected", "rejected:");
        // Idle: anything said again would be drawn meanwhile.
        std::thread::sleep(Duration::from_secs(5));
        let rows = console.rows();
        let notice = only_row(&rows, "rejected:");
        assert!(
            rows[notice].starts_with("plugin at "),
            "on a line of its own, from its start:\n{}",
            rows.join("\n")
        );
        assert!(!rows[notice].contains(typed), "{}", rows.join("\n"));
        assert!(prompt_row(&rows, typed) > notice, "the prompt below the notice:\n{}", rows.join("\n"));
        assert!(
            rows.iter().all(|row| !row.contains("reload rejected; the current plugins keep serving")),
            "said once, not again in the log:\n{}",
            rows.join("\n")
        );

        // The fix, with a setting changed: the plugin is configured anew and says so.
        edit(&config, "max_iterations = 6 6", "max_iterations = 6");
        edit(&config, "prefix = \"v1 \"", "prefix = \"v2 \"");
        console.wait_for("loaded", "misbehave@0.1.0 loaded");
        std::thread::sleep(Duration::from_secs(2));
        let rows = console.rows();
        let loaded = only_row(&rows, "misbehave@0.1.0 loaded");
        assert!(rows[loaded].starts_with("plugin misbehave"), "{}", rows.join("\n"));
        assert!(prompt_row(&rows, typed) > loaded, "{}", rows.join("\n"));
        assert_eq!(only_row(&rows, "rejected:"), notice, "the rejection was not said again");
        assert!(prompt_line(&console.contents()).ends_with(typed));

        console.keys("\x15");
        assert!(console.leave().success());
    })
    .await
    .unwrap();
}

/// The shipped config's console, after its offline demo, left alone at the prompt: nothing
/// drawn, next to no CPU spent (its own and its builds'). As in `idle_reload`, the bound is a
/// check that no loop runs: an idle console wakes a few dozen times a second (the editor's
/// look for lines to print, the spinner's clock, the watcher's ticks) and spends hundredths
/// of a CPU-second in ten; one that rebuilds its plugins on its own reads spends seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_console_on_the_shipped_config_draws_nothing_and_spends_next_to_no_cpu() {
    let deployment = shipped_deployment();
    let config = deployment.path().join("config.toml");
    tokio::task::spawn_blocking(move || {
        let console = Console::start("idle-console", &config, &[]);
        console.wait_until("demo", |screen| {
            screen.contains("That was the offline demo") && screen.trim_end().ends_with('>')
        });
        let pid = console.child.id();
        let (screen, cpu) = (console.contents(), cpu_seconds(pid));
        std::thread::sleep(IDLE);
        let spent = cpu_seconds(pid) - cpu;
        assert_eq!(console.contents(), screen, "nothing is drawn while nobody types");
        assert!(spent < 1.0, "idle for {IDLE:?}, the console spent {spent:.2} CPU-seconds");
        assert!(console.leave().success());
        drop(deployment);
    })
    .await
    .unwrap();
}
