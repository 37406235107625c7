use crate::{budgeted_listing, granted_folder, no_repeats};

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

#[test]
fn a_granted_folder_is_spelt_once_and_each_refusal_says_what_to_name() {
    let granted = |dir| granted_folder(dir, "/user-things", "name the granted folder itself");
    assert_eq!(granted(" /things//mine/ ").as_deref(), Ok("/things/mine"));
    assert_eq!(
        granted("things").unwrap_err(),
        "`things` is not an absolute path; name the folder as the plugin's [plugin.grants.dirs] maps it, \
         such as \"/user-things\""
    );
    assert_eq!(granted("/a/../b").unwrap_err(), "`/a/../b` contains `..`; name the granted folder itself");
    assert_eq!(granted("/a\0b").unwrap_err(), "`/a\\0b` holds a NUL character");
    assert_eq!(granted("/").unwrap_err(), "`/` is the whole sandbox; name the granted folder itself");
}

#[test]
fn a_folder_listed_twice_is_named_at_both_places() {
    assert_eq!(no_repeats("dirs", &["/a", "/b"]), Ok(()));
    assert_eq!(
        no_repeats("dirs", &["/a", "/b", "/a"]),
        Err("`dirs[2]`: `/a` is already `dirs[0]`".to_owned())
    );
}
