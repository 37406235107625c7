use crate::frontmatter::{Split, split};

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
