//! A file a tool changed, drawn at a terminal: one line naming it with the lines added and
//! removed, then the changed lines with a little context around each change, cut short.

use similar::{ChangeTag, TextDiff};

use agent_host::events::FileEdit;
use agent_host::sanitize::one_line;

/// Unchanged lines shown around each change.
const CONTEXT_LINES: usize = 2;

/// One line of a drawn diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Added(String),
    Removed(String),
    Unchanged(String),
    /// Unchanged lines left out between two changes.
    Gap,
    /// How many more lines there were past the cut.
    More(usize),
}

/// `path  +3 −1`, or what became of the file when there is nothing to count.
pub fn summary(edit: &FileEdit) -> String {
    let path = one_line(&edit.path);
    if edit.texts_left_out {
        return format!("{path}  (changed; too large to show)");
    }
    match (&edit.before, &edit.after) {
        (None, Some(after)) => format!("{path}  (new, {})", lines(after.lines().count())),
        (Some(_), None) => format!("{path}  (deleted)"),
        (None, None) => format!("{path}  (changed)"),
        (Some(before), Some(after)) => {
            let (added, removed) = counts(before, after);
            format!("{path}  +{added} −{removed}")
        }
    }
}

/// The changed lines of `edit` with their context, escaped, at most `shown` of them (then
/// how many more); none when its texts were left out.
pub fn diff_lines(edit: &FileEdit, shown: usize) -> Vec<DiffLine> {
    if edit.texts_left_out {
        return Vec::new();
    }
    let before = edit.before.as_deref().unwrap_or_default();
    let after = edit.after.as_deref().unwrap_or_default();
    let diff = TextDiff::from_lines(before, after);
    let mut drawn = Vec::new();
    for (index, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
        if index > 0 {
            drawn.push(DiffLine::Gap);
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let text = one_line(change.value().trim_end_matches(['\n', '\r'])).into_owned();
                drawn.push(match change.tag() {
                    ChangeTag::Insert => DiffLine::Added(text),
                    ChangeTag::Delete => DiffLine::Removed(text),
                    ChangeTag::Equal => DiffLine::Unchanged(text),
                });
            }
        }
    }
    if drawn.len() > shown {
        let more = drawn.len() - shown;
        drawn.truncate(shown);
        drawn.push(DiffLine::More(more));
    }
    drawn
}

fn counts(before: &str, after: &str) -> (usize, usize) {
    let diff = TextDiff::from_lines(before, after);
    diff.iter_all_changes().fold((0, 0), |(added, removed), change| match change.tag() {
        ChangeTag::Insert => (added + 1, removed),
        ChangeTag::Delete => (added, removed + 1),
        ChangeTag::Equal => (added, removed),
    })
}

fn lines(count: usize) -> String {
    if count == 1 { "1 line".into() } else { format!("{count} lines") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(before: Option<&str>, after: Option<&str>) -> FileEdit {
        FileEdit {
            path: "src/a.rs".into(),
            before: before.map(str::to_owned),
            after: after.map(str::to_owned),
            texts_left_out: false,
        }
    }

    #[test]
    fn a_change_is_shown_with_two_lines_of_context_and_far_changes_apart() {
        let before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let after = "1\nTWO\n3\n4\n5\n6\n7\n8\n9\nTEN\n";
        let changed = edit(Some(before), Some(after));
        assert_eq!(summary(&changed), "src/a.rs  +2 −2");
        use DiffLine::*;
        let s = |t: &str| t.to_owned();
        assert_eq!(
            diff_lines(&changed, 100),
            [
                Unchanged(s("1")),
                Removed(s("2")),
                Added(s("TWO")),
                Unchanged(s("3")),
                Unchanged(s("4")),
                Gap,
                Unchanged(s("8")),
                Unchanged(s("9")),
                Removed(s("10")),
                Added(s("TEN")),
            ]
        );
        let cut = diff_lines(&changed, 3);
        assert_eq!(cut, [Unchanged(s("1")), Removed(s("2")), Added(s("TWO")), More(7)]);
    }

    #[test]
    fn new_deleted_and_too_large_files_say_so_and_escapes_are_shown_escaped() {
        assert_eq!(summary(&edit(None, Some("a\nb\n"))), "src/a.rs  (new, 2 lines)");
        assert_eq!(summary(&edit(Some("a\n"), None)), "src/a.rs  (deleted)");
        let large = FileEdit { texts_left_out: true, ..edit(None, None) };
        assert_eq!(summary(&large), "src/a.rs  (changed; too large to show)");
        assert!(diff_lines(&large, 10).is_empty());
        let hostile = edit(None, Some("\x1b]0;owned\x07title\n"));
        let drawn = diff_lines(&hostile, 10);
        let DiffLine::Added(line) = &drawn[0] else { panic!("{drawn:?}") };
        assert!(!line.contains('\x1b') && line.contains("title"), "{line:?}");
    }
}
