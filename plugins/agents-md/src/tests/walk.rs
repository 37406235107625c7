use super::{AgentsMdFiles, Workspace};
use crate::walk::{MAX_FOLDERS, walk};

fn folders(workspace: &Workspace, max_depth: u32) -> Vec<String> {
    let walked = walk(workspace.path(), max_depth).unwrap();
    assert!(!walked.stopped);
    walked.folders
}

#[test]
fn the_root_comes_first_then_by_depth_then_folder_by_folder() {
    let workspace = Workspace::new();
    for folder in ["c/d/e", "a-b/c", "b", "", "a/z", "a"] {
        workspace.agents_md(folder, folder);
    }
    // `a/z` before `a-b/c`: by the folders' names, `a` before `a-b`, though as text `-` sorts
    // before `/`.
    assert_eq!(folders(&workspace, 8), ["", "a", "b", "a/z", "a-b/c", "c/d/e"]);
}

#[test]
fn hidden_folders_node_modules_and_target_are_skipped_at_any_depth() {
    let workspace = Workspace::new();
    for folder in [
        "",
        "src",
        ".git",
        ".github/workflows",
        "node_modules/left-pad",
        "target",
        "src/target/debug",
        "web/node_modules/x",
    ] {
        workspace.agents_md(folder, "x");
    }
    workspace.file("docs/agents.md", "another name");
    assert_eq!(folders(&workspace, 8), ["", "src"]);
}

#[test]
fn max_depth_counts_the_folders_below_the_workspace() {
    let workspace = Workspace::new();
    for folder in ["", "a", "a/b", "a/b/c"] {
        workspace.agents_md(folder, "x");
    }
    assert_eq!(folders(&workspace, 0), [""]);
    assert_eq!(folders(&workspace, 2), ["", "a", "a/b"]);
    assert_eq!(folders(&workspace, 3), ["", "a", "a/b", "a/b/c"]);
}

#[test]
fn a_folder_is_never_entered_through_a_symbolic_link() {
    let outside = Workspace::new();
    outside.file("AGENTS.md", "outside").file("deep/AGENTS.md", "outside, deeper");
    let workspace = Workspace::new();
    workspace
        .file("real/AGENTS.md", "real")
        .link("alias", "real")
        .link("out", &outside.config_path())
        .link("up", "..");
    assert_eq!(folders(&workspace, 8), ["real"], "each file once, where it lies, and none outside");
}

#[test]
fn a_workspace_that_cannot_be_read_is_an_error_that_says_what_to_grant() {
    let error = walk(std::path::Path::new("/no/such/workspace"), 8).unwrap_err();
    assert!(error.starts_with("the workspace cannot be read ("), "{error}");
    assert!(error.ends_with(
        "grant it to this plugin under [plugin.grants.dirs], at the guest path `workspace` names"
    ));
}

#[test]
fn the_walk_stops_at_its_folder_count() {
    let workspace = Workspace::new();
    workspace.file("AGENTS.md", "root");
    for index in 0..MAX_FOLDERS {
        std::fs::create_dir(workspace.path().join(format!("f{index:04}"))).unwrap();
    }
    workspace.file("zz/AGENTS.md", "past the count");
    let walked = walk(workspace.path(), 8).unwrap();
    assert!(walked.stopped);
    assert_eq!(walked.folders, [""]);
}
