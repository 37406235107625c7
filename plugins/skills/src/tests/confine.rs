use super::{Folder, SkillFiles};
use crate::confine::{file_in, read_text, relative_parts, resolve};
use crate::script::script_path;

fn parts(path: &str) -> Vec<String> {
    relative_parts(path).unwrap()
}

#[test]
fn a_relative_path_is_read_in_parts() {
    assert_eq!(parts("references/forms.md"), ["references", "forms.md"]);
    assert_eq!(parts(" ./references//forms.md/ "), ["references", "forms.md"]);
}

#[test]
fn absolute_paths_parent_parts_nul_and_the_folder_itself_are_refused() {
    let cases = [
        ("/etc/passwd", "`/etc/passwd` is an absolute path; give a path relative to the skill's folder"),
        ("../other/SKILL.md", "`../other/SKILL.md` contains `..`; paths must stay inside the skill's folder"),
        (
            "references/../../x",
            "`references/../../x` contains `..`; paths must stay inside the skill's folder",
        ),
        ("a\0b", "`a\\0b` holds a NUL character"),
        ("", "`` names the skill's folder itself; give a file inside it"),
        ("./", "`./` names the skill's folder itself; give a file inside it"),
    ];
    for (path, error) in cases {
        assert_eq!(relative_parts(path).unwrap_err(), error, "{path:?}");
    }
}

#[test]
fn links_that_stay_inside_the_skill_are_followed() {
    let skill = Folder::new();
    skill
        .file("references/forms.md", "forms")
        .link("docs", "references")
        .link("references/alias.md", "forms.md");
    assert_eq!(
        resolve(skill.path(), &parts("docs/forms.md"), "docs/forms.md").unwrap(),
        ["references", "forms.md"]
    );
    assert_eq!(
        resolve(skill.path(), &parts("references/alias.md"), "references/alias.md").unwrap(),
        ["references", "forms.md"]
    );
    let (at, real) = file_in(skill.path(), "docs/alias.md").unwrap();
    assert_eq!(real, ["references", "forms.md"]);
    assert_eq!(read_text(&at, "docs/alias.md", 100).unwrap(), "forms");
}

#[test]
fn links_that_lead_out_of_the_skill_are_refused() {
    let outside = Folder::new();
    outside.file("secret.txt", "secret");
    let skills = Folder::new();
    skills.skill("pdf", "d", "b").skill("other", "d", "b");
    skills
        .link("pdf/up", "..")
        .link("pdf/sibling.md", "../other/SKILL.md")
        .link("pdf/absolute", &outside.config_path())
        .link("pdf/loop", "loop");
    let root = skills.path().join("pdf");
    let refused = |path: &str| resolve(&root, &parts(path), path).unwrap_err();
    assert_eq!(
        refused("up/other/SKILL.md"),
        "`up/other/SKILL.md` goes through the symlink `up`, which leads outside the skill's folder"
    );
    assert_eq!(
        refused("sibling.md"),
        "`sibling.md` goes through the symlink `sibling.md`, which leads outside the skill's folder"
    );
    assert_eq!(
        refused("absolute/secret.txt"),
        "`absolute/secret.txt` goes through the symlink `absolute`, which leads outside the skill's folder"
    );
    assert_eq!(refused("loop"), "`loop` goes through more than 40 symlinks");
}

#[test]
fn a_file_read_is_text_within_the_cap() {
    let skill = Folder::new();
    skill.file("big.txt", &"x".repeat(101)).file("binary.bin", "").file("references/a.md", "a");
    std::fs::write(skill.path().join("binary.bin"), [0xff, 0xfe, 0x00]).unwrap();
    let read = |path: &str| read_text(&skill.path().join(path), path, 100);
    assert_eq!(
        read("big.txt").unwrap_err(),
        "`big.txt` takes 101 bytes, over the 100 bytes one read may return (`max_file_kb`)"
    );
    assert_eq!(read("binary.bin").unwrap_err(), "`binary.bin` is not UTF-8 text (3 bytes)");
    assert_eq!(read("references").unwrap_err(), "`references` is a folder; give a file inside it");
    assert!(read("absent.md").unwrap_err().starts_with("`absent.md`: "));
    assert_eq!(read("references/a.md").unwrap(), "a");
}

#[test]
fn a_script_is_a_file_under_scripts_even_through_a_link() {
    let skill = Folder::new();
    skill
        .file("scripts/run.sh", "echo hi")
        .file("references/notes.md", "n")
        .link("scripts/notes", "../references/notes.md");
    assert_eq!(script_path(skill.path(), "scripts/run.sh").unwrap(), "scripts/run.sh");
    assert_eq!(
        script_path(skill.path(), "run.sh").unwrap(),
        "scripts/run.sh",
        "the scripts/ prefix may be left off"
    );
    assert_eq!(
        script_path(skill.path(), "scripts/notes").unwrap_err(),
        "`scripts/notes` leads to `references/notes.md`, which is not under scripts/; only a skill's scripts run"
    );
    assert!(script_path(skill.path(), "../x.sh").unwrap_err().contains("contains `..`"));
    assert!(script_path(skill.path(), "/bin/sh").unwrap_err().contains("is an absolute path"));
}
