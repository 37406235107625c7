use super::{Folder, SkillFiles};
use crate::catalog::{Catalog, Problem, Skill};
use crate::config::{Config, Origin, Root, configure};
use crate::scan::scan;

fn user(folder: &Folder) -> Root {
    Root { dir: folder.config_path(), origin: Origin::User }
}

#[test]
fn every_valid_skill_is_found_and_a_broken_one_is_set_aside_with_its_rules() {
    let folder = Folder::new();
    folder
        .skill("pdf", "Reads PDFs.", "Body")
        .skill("review", "Reviews code.", "Body")
        .skill_md("Bad", "---\nname: Bad\ndescription: d\n---\n")
        .skill_md("no-front", "# nothing\n")
        .file("notes.txt", "not a skill")
        .file("empty-folder/readme.md", "no SKILL.md here")
        .skill_md(".hidden", "---\nname: x\n---\n");
    let catalog = scan(&[user(&folder)], &[]);
    let dir = |name: &str| format!("{}/{name}", folder.config_path());
    assert_eq!(
        catalog.skills,
        [
            Skill {
                name: "pdf".into(),
                description: "Reads PDFs.".into(),
                dir: dir("pdf"),
                origin: Origin::User
            },
            Skill {
                name: "review".into(),
                description: "Reviews code.".into(),
                dir: dir("review"),
                origin: Origin::User
            },
        ]
    );
    assert_eq!(catalog.problems.len(), 2, "{:?}", catalog.problems);
    assert_eq!(
        catalog.problems[0],
        Problem {
            path: format!("{}/SKILL.md", dir("Bad")),
            rules: vec![
                "`name` \"Bad\" holds `B`: only lowercase letters a-z, digits 0-9 and hyphens are allowed"
                    .into()
            ],
        }
    );
    assert_eq!(catalog.problems[1].path, format!("{}/SKILL.md", dir("no-front")));
    assert!(catalog.problems[1].rules[0].starts_with("it has no frontmatter"));
}

#[test]
fn an_earlier_folder_wins_a_name_and_a_missing_folder_holds_nothing() {
    let project = Folder::new();
    project.skill("pdf", "The project's.", "");
    let user_folder = Folder::new();
    user_folder.skill("pdf", "The operator's.", "").skill("notes", "Notes.", "");
    let roots = [
        Root { dir: project.config_path(), origin: Origin::Project },
        Root { dir: "/no/such/folder".into(), origin: Origin::User },
        user(&user_folder),
    ];
    let catalog = scan(&roots, &[]);
    let found: Vec<(&str, &str, Origin)> =
        catalog.skills.iter().map(|s| (s.name.as_str(), s.description.as_str(), s.origin)).collect();
    assert_eq!(found, [("pdf", "The project's.", Origin::Project), ("notes", "Notes.", Origin::User)]);
    assert!(catalog.problems.is_empty());
}

#[test]
fn an_oversized_or_unreadable_skill_md_is_set_aside() {
    let folder = Folder::new();
    folder.skill_md("big", &format!("---\nname: big\ndescription: d\n---\n{}", "x".repeat(128 * 1024)));
    folder.skill_md("latin", "");
    std::fs::write(folder.path().join("latin/SKILL.md"), b"---\nname: latin\ndescription: caf\xe9\n---\n")
        .unwrap();
    let catalog = scan(&[user(&folder)], &[]);
    assert!(catalog.skills.is_empty());
    assert_eq!(
        catalog.problems[0].rules,
        ["SKILL.md takes 129 KiB, over the 128 KiB a skill may take; move detail into references/"]
    );
    assert_eq!(catalog.problems[1].rules, ["SKILL.md is not UTF-8 text"]);
}

#[test]
fn a_skill_folder_linked_out_of_reach_is_reported() {
    let folder = Folder::new();
    folder.link("gone", "/no/such/skill");
    let catalog = scan(&[user(&folder)], &[]);
    assert_eq!(catalog.problems.len(), 1);
    assert!(
        catalog.problems[0].rules[0].starts_with("it is a symlink that cannot be followed"),
        "{:?}",
        catalog.problems
    );
}

#[test]
fn project_folders_are_scanned_only_when_trusted_and_come_first() {
    let mut config = Config::default();
    configure(&mut config).unwrap();
    assert_eq!(config.roots(), [Root { dir: "/user-skills".into(), origin: Origin::User }]);
    assert_eq!(
        config.untrusted_roots(),
        [Root { dir: "/workspace/.agents/skills".into(), origin: Origin::Project }]
    );
    config.trust_project = true;
    assert_eq!(
        config.roots(),
        [
            Root { dir: "/workspace/.agents/skills".into(), origin: Origin::Project },
            Root { dir: "/user-skills".into(), origin: Origin::User },
        ]
    );
    assert!(config.untrusted_roots().is_empty());
}

#[test]
fn an_untrusted_project_folder_is_noted_only_when_it_exists_and_never_read() {
    let project = Folder::new();
    project.skill("pdf", "The project's.", "");
    let untrusted = [
        Root { dir: project.config_path(), origin: Origin::Project },
        Root { dir: "/no/such/folder".into(), origin: Origin::Project },
    ];
    assert_eq!(
        scan(&[], &untrusted),
        Catalog { untrusted: vec![project.config_path()], ..Catalog::default() }
    );
}

#[test]
fn the_catalog_finds_a_skill_or_names_the_ones_there_are() {
    let folder = Folder::new();
    folder.skill("pdf", "d", "").skill("review", "d", "");
    let catalog = scan(&[user(&folder)], &[]);
    assert_eq!(catalog.find("pdf").unwrap().name, "pdf");
    assert_eq!(
        catalog.find("nope").unwrap_err(),
        "there is no skill named `nope`; the skills are: pdf, review"
    );
    assert_eq!(
        Catalog::default().find("pdf").unwrap_err(),
        "there is no skill named `pdf`: no skills were found"
    );
}
