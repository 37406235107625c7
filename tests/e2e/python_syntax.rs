//! A Python plugin folder whose source does not compile is refused with Python's own words
//! (the file, the line, the text and the message), not under componentize-py's traceback; and
//! newer syntax than the machine's own Python knows is not taken for an error.

use std::path::Path;

use crate::support::{FakeModel, TestHost, config_text};

/// A Python plugin folder: its `plugin.py` imports `helper.py`, which holds `helper`.
fn python_folder(helper: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"syntax\"\nversion = \"0.1.0\"\n")
        .unwrap();
    std::fs::write(
        dir.path().join("plugin.py"),
        "from agent_host_sdk import Plugin\nimport helper\n\nplugin = Plugin(\"syntax\", \"0.1.0\")\n\n\
         @plugin.tool(\"label\", \"Labels a name.\")\n\
         def label(ctx) -> str:\n    return helper.label({\"name\": \"ada\"})\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("helper.py"), helper).unwrap();
    dir
}

/// The error of loading a deployment whose one plugin is the folder `source`.
async fn load_error(source: &Path) -> String {
    let model = FakeModel::start().await;
    let block = format!("[[plugin]]\npath = \"{}\"\n", source.display());
    let refused =
        TestHost::new(&config_text(&model.url(), &block)).await.err().expect("the folder is refused");
    format!("{refused:#}")
}

#[tokio::test]
async fn a_syntax_error_is_refused_in_pythons_words_alone() {
    let source = python_folder("def label(person):\n    return person['name']\n\ndef broken(:\n    pass\n");
    let error = load_error(source.path()).await;
    assert!(error.contains("its Python does not compile"), "{error}");
    assert!(error.contains("File \"helper.py\", line 4") && error.contains("def broken(:"), "{error}");
    assert!(error.contains("SyntaxError"), "{error}");
    assert!(
        !error.contains("Traceback") && !error.contains("componentize-py"),
        "no tool's traceback: {error}"
    );
    assert!(!source.path().join("__pycache__").exists(), "the check wrote no bytecode in the folder");
}

/// An f-string with quotes of its own kind inside is Python 3.12's; the component carries a
/// newer Python than that, so the folder builds whatever Python the machine has.
#[tokio::test]
async fn newer_syntax_than_the_machines_python_builds() {
    let source = python_folder("def label(person):\n    return f\"<{person[\"name\"]}>\"\n");
    let model = FakeModel::start().await;
    let block = format!("[[plugin]]\npath = \"{}\"\n", source.path().display());
    let test = TestHost::new(&config_text(&model.url(), &block)).await.expect("the folder builds");
    let session = test.session();
    let mut session = session.lock().await;
    let result =
        test.host.invoke_tool(&mut session, "label", &serde_json::json!({}), &*test.events).await.unwrap();
    assert_eq!((result.ok, result.output.as_str()), (true, "<ada>"), "{result:?}");
}
