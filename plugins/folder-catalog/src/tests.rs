use crate::budgeted_listing;

fn entries<'a>(names: &[&'a str], description: &str) -> Vec<(&'a str, String)> {
    names.iter().map(|name| (*name, description.to_owned())).collect()
}

#[test]
fn each_entry_has_its_line_after_the_intro() {
    let text = budgeted_listing("## Things\n\n", entries(&["a", "b"], "Does it."), 1024, "More: ");
    assert_eq!(text.as_deref(), Some("## Things\n\n- `a`: Does it.\n- `b`: Does it.\n"));
}

#[test]
fn past_the_budget_the_rest_are_named_only_in_order() {
    let intro = "## Things\n\n";
    let budget = intro.len() + "- `a`: Does it.\n".len();
    let text = budgeted_listing(intro, entries(&["a", "b", "c"], "Does it."), budget, "More: ");
    assert_eq!(text.as_deref(), Some("## Things\n\n- `a`: Does it.\nMore: `b`, `c`\n"));
}

#[test]
fn no_entries_no_listing() {
    assert_eq!(budgeted_listing("## Things\n\n", Vec::new(), 1024, "More: "), None);
}
