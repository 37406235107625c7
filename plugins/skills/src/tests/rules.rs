use std::collections::BTreeMap;

use crate::rules::{Meta, name_problems, parse, read_meta};

/// The problems of a frontmatter in the folder `folder`.
fn problems(yaml: &str, folder: &str) -> Vec<String> {
    read_meta(yaml, folder).expect_err("the frontmatter breaks a rule")
}

/// The one problem of a frontmatter in the folder `pdf`.
fn problem(yaml: &str) -> String {
    let mut problems = problems(yaml, "pdf");
    assert_eq!(problems.len(), 1, "{problems:?}");
    problems.remove(0)
}

#[test]
fn every_field_of_a_full_frontmatter_is_read() {
    let yaml = "name: pdf\n\
        description: >-\n  Extracts text from PDFs.\n  Use for forms.\n\
        license: Apache-2.0\n\
        compatibility: Needs python3 and poppler\n\
        metadata:\n  author: example-org\n  version: \"1.0\"\n\
        allowed-tools: Bash(git:*) Read\n\
        x-unknown: left alone\n";
    assert_eq!(
        read_meta(yaml, "pdf"),
        Ok(Meta {
            name: "pdf".to_owned(),
            description: "Extracts text from PDFs. Use for forms.".to_owned(),
            license: Some("Apache-2.0".to_owned()),
            compatibility: Some("Needs python3 and poppler".to_owned()),
            metadata: BTreeMap::from([
                ("author".to_owned(), "example-org".to_owned()),
                ("version".to_owned(), "1.0".to_owned())
            ]),
            allowed_tools: vec!["Bash(git:*)".to_owned(), "Read".to_owned()],
        })
    );
}

#[test]
fn the_body_follows_the_frontmatter() {
    let file =
        parse("---\nname: pdf\ndescription: Reads PDFs.\n---\n\n# PDF\n\nRun the script.\n", "pdf").unwrap();
    assert_eq!(file.meta.name, "pdf");
    assert_eq!(file.body, "# PDF\n\nRun the script.");
}

#[test]
fn name_and_description_are_required() {
    assert_eq!(
        problems("license: MIT\n", "pdf"),
        ["`name` is missing; it is required", "`description` is missing; it is required"]
    );
    assert_eq!(
        problems("", "pdf"),
        ["`name` is missing; it is required", "`description` is missing; it is required"]
    );
    assert_eq!(problem("name:\ndescription: d\n"), "`name` is missing; it is required");
}

#[test]
fn a_name_is_one_to_sixty_four_characters() {
    let long = "a".repeat(65);
    assert!(name_problems(&"a".repeat(64), &"a".repeat(64)).is_empty());
    assert_eq!(name_problems(&long, &long), ["`name` must be 1 to 64 characters, not 65"]);
    assert_eq!(name_problems("", ""), ["`name` must be 1 to 64 characters, not 0"]);
}

#[test]
fn a_name_holds_only_lowercase_letters_digits_and_hyphens() {
    assert!(name_problems("pdf-2-text", "pdf-2-text").is_empty());
    for (name, bad) in [("Pdf", "P"), ("pdf_tool", "_"), ("pdf tool", " "), ("pdf.tool", "."), ("café", "é")]
    {
        assert_eq!(
            name_problems(name, name),
            [format!(
                "`name` \"{name}\" holds `{bad}`: only lowercase letters a-z, digits 0-9 and hyphens are allowed"
            )],
            "{name}"
        );
    }
}

#[test]
fn a_name_neither_starts_nor_ends_with_a_hyphen() {
    for name in ["-pdf", "pdf-", "-"] {
        assert_eq!(
            name_problems(name, name),
            [format!("`name` \"{name}\" must not start or end with a hyphen")]
        );
    }
}

#[test]
fn a_name_holds_no_two_hyphens_in_a_row() {
    assert_eq!(
        name_problems("pdf--tool", "pdf--tool"),
        ["`name` \"pdf--tool\" must not hold two hyphens in a row"]
    );
}

#[test]
fn a_name_is_its_folders_name() {
    assert_eq!(
        name_problems("pdf", "pdf-tools"),
        ["`name` \"pdf\" must be the same as its folder's name, \"pdf-tools\""]
    );
}

#[test]
fn a_name_breaking_several_rules_is_told_each() {
    assert_eq!(
        problems("name: -Bad--\ndescription: d\n", "bad"),
        [
            "`name` \"-Bad--\" holds `B`: only lowercase letters a-z, digits 0-9 and hyphens are allowed",
            "`name` \"-Bad--\" must not start or end with a hyphen",
            "`name` \"-Bad--\" must not hold two hyphens in a row",
            "`name` \"-Bad--\" must be the same as its folder's name, \"bad\"",
        ]
    );
}

#[test]
fn a_description_is_not_blank_and_at_most_1024_characters() {
    assert_eq!(
        problem("name: pdf\ndescription: \"  \"\n"),
        "`description` is blank; say what the skill does and when to use it"
    );
    let long = "d".repeat(1025);
    assert_eq!(
        problem(&format!("name: pdf\ndescription: {long}\n")),
        "`description` must be at most 1024 characters, not 1025"
    );
    assert!(
        read_meta(&format!("name: pdf\ndescription: {}\n", "é".repeat(1024)), "pdf").is_ok(),
        "characters, not bytes"
    );
}

#[test]
fn compatibility_is_at_most_500_characters() {
    let yaml = format!("name: pdf\ndescription: d\ncompatibility: {}\n", "c".repeat(501));
    assert_eq!(problem(&yaml), "`compatibility` must be at most 500 characters, not 501");
    assert!(
        read_meta(&format!("name: pdf\ndescription: d\ncompatibility: {}\n", "c".repeat(500)), "pdf").is_ok()
    );
}

#[test]
fn fields_of_the_wrong_kind_are_named() {
    assert_eq!(
        problem("name: pdf\ndescription: 42\n"),
        "`description` must be a string, not a whole number (put it in quotes)"
    );
    assert_eq!(
        problem("name: pdf\ndescription: d\nlicense: [MIT]\n"),
        "`license` must be a string, not a list"
    );
    assert_eq!(
        problem("name: pdf\ndescription: d\ncompatibility: true\n"),
        "`compatibility` must be a string, not true or false (put it in quotes)"
    );
    assert_eq!(
        problem("name: pdf\ndescription: d\nmetadata: author\n"),
        "`metadata` must be a map of strings to strings, not a string"
    );
    assert_eq!(
        problem("name: pdf\ndescription: d\nmetadata:\n  version: 1.0\n"),
        "`metadata.version` must be a string, not a number (put it in quotes)"
    );
    assert_eq!(
        problem("name: pdf\ndescription: d\nallowed-tools: 3\n"),
        "`allowed-tools` must be a space-separated string of tool names, not a whole number"
    );
    assert_eq!(
        problems("name: 7\ndescription: d\n", "7"),
        ["`name` must be a string, not a whole number (put it in quotes)"]
    );
}

#[test]
fn allowed_tools_may_be_a_list_of_names() {
    let meta = read_meta("name: pdf\ndescription: d\nallowed-tools: [Read, Grep]\n", "pdf").unwrap();
    assert_eq!(meta.allowed_tools, ["Read", "Grep"]);
}

#[test]
fn yaml_that_does_not_parse_is_told_with_its_line_in_the_file() {
    let error = problem("name: pdf\ndescription: Use when: the user asks\n");
    assert!(error.starts_with("its frontmatter is not valid YAML: "), "{error}");
    assert!(error.ends_with("(line 3 of SKILL.md)"), "{error}");
}

#[test]
fn a_frontmatter_that_is_not_a_mapping_is_refused() {
    assert_eq!(
        problem("- name\n- description\n"),
        "its frontmatter is not a mapping of fields (`name: ...` lines)"
    );
}

#[test]
fn a_file_without_frontmatter_is_told_so() {
    let error = parse("# PDF\n", "pdf").unwrap_err();
    assert_eq!(error.len(), 1);
    assert!(error[0].starts_with("it has no frontmatter"), "{error:?}");
}
