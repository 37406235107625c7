use crate::{Fields, Split, Yaml, split};

#[test]
fn the_frontmatter_is_between_the_first_two_fence_lines_and_the_body_follows() {
    let text = "---\nname: a\ndescription: b\n---\n\n# Title\n\nDo this.\n\n";
    assert_eq!(
        split(text),
        Ok(Split { frontmatter: "name: a\ndescription: b\n", body: "# Title\n\nDo this." })
    );
}

#[test]
fn windows_line_endings_a_byte_order_mark_and_trailing_spaces_on_a_fence_are_read() {
    let text = "\u{feff}--- \r\nname: a\r\n---\r\nBody\r\n";
    assert_eq!(split(text), Ok(Split { frontmatter: "name: a\r\n", body: "Body" }));
}

#[test]
fn a_fence_inside_the_body_stays_in_the_body() {
    let text = "---\nname: a\n---\nBefore\n---\nAfter";
    assert_eq!(split(text).unwrap().body, "Before\n---\nAfter");
}

#[test]
fn an_empty_frontmatter_and_an_empty_body_split() {
    assert_eq!(split("---\n---\n"), Ok(Split { frontmatter: "", body: "" }));
    assert_eq!(split("---\nname: a\n---"), Ok(Split { frontmatter: "name: a\n", body: "" }));
}

#[test]
fn a_file_without_an_opening_fence_has_no_frontmatter() {
    for text in
        ["# Just markdown\n", "", "\n---\nname: a\n---\n", "----\nname: a\n---\n", "--- name: a\n---\n"]
    {
        let error = split(text).unwrap_err();
        assert!(error.starts_with("it has no frontmatter"), "{text:?}: {error}");
    }
}

#[test]
fn a_frontmatter_never_closed_is_refused() {
    let error = split("---\nname: a\ndescription: b\n").unwrap_err();
    assert_eq!(error, "its frontmatter is not closed: no `---` line follows the opening one");
}

#[test]
fn fields_are_read_as_the_type_asked_and_a_missing_or_empty_one_is_none() {
    let fields = Fields::load("name: a\nempty:\nlimit: 12\nactive: false\nlist: [x]\n", "a.md").unwrap();
    assert_eq!(fields.keys().collect::<Vec<_>>(), ["name", "empty", "limit", "active", "list"]);
    assert_eq!(fields.required_string("name"), Ok("a".to_owned()));
    assert_eq!(fields.optional_string("empty"), Ok(None));
    assert_eq!(fields.get("empty"), None);
    assert_eq!(fields.optional_count("limit"), Ok(Some(12)));
    assert_eq!(fields.optional_bool("active"), Ok(Some(false)));
    assert_eq!(fields.get("list"), Some(&Yaml::Array(vec![Yaml::String("x".to_owned())])));
    assert_eq!(fields.optional_count("missing"), Ok(None));
}

#[test]
fn a_field_of_the_wrong_kind_is_named_with_what_it_is() {
    let fields =
        Fields::load("version: 1.5\nname: [a]\nlimit: 0\nhuge: 99999999999\nflag: yes\n", "a.md").unwrap();
    assert_eq!(
        fields.required_string("version").unwrap_err(),
        "`version` must be a string, not a number (put it in quotes)"
    );
    assert_eq!(fields.required_string("name").unwrap_err(), "`name` must be a string, not a list");
    assert_eq!(fields.required_string("gone").unwrap_err(), "`gone` is missing; it is required");
    assert_eq!(
        fields.optional_count("limit").unwrap_err(),
        "`limit` must be a whole number from 1 to 4294967295, not 0"
    );
    assert_eq!(
        fields.optional_count("huge").unwrap_err(),
        "`huge` must be a whole number from 1 to 4294967295, not 99999999999"
    );
    assert_eq!(fields.optional_count("name").unwrap_err(), "`name` must be a whole number, not a list");
    assert_eq!(fields.optional_bool("flag").unwrap_err(), "`flag` must be true or false, not a string");
}

#[test]
fn a_frontmatter_that_is_no_mapping_or_no_yaml_is_refused_naming_the_file_and_line() {
    assert_eq!(Fields::load("", "a.md").unwrap().keys().count(), 0);
    assert_eq!(
        Fields::load("- a\n- b\n", "a.md").unwrap_err(),
        "its frontmatter is not a mapping of fields (`name: ...` lines)"
    );
    let error = Fields::load("name: a\ndescription: [unclosed\n", "agent.md").unwrap_err();
    assert!(error.starts_with("its frontmatter is not valid YAML: "), "{error}");
    assert!(error.ends_with("of agent.md)"), "{error}");
}
