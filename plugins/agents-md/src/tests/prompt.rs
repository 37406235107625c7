use crate::prompt::text;
use crate::scan::{Offered, Scan};

fn offered(folder: &str, text: &str) -> Offered {
    Offered { folder: folder.to_owned(), text: text.to_owned(), size: text.len() as u64, cut: false }
}

#[test]
fn each_file_comes_under_a_heading_that_names_its_folder_and_where_it_applies() {
    let scan = Scan {
        files: vec![offered("", "Use tabs.\n\n"), offered("api/v2", "Return errors as JSON.")],
        ..Scan::default()
    };
    assert_eq!(
        text(&scan, 32).unwrap(),
        "## Project instructions (AGENTS.md)\n\n\
         The workspace's AGENTS.md files, as the project wrote them. Each applies to the files under its \
         folder. Where two disagree, the one in the deeper folder takes precedence for the files under it.\n\
         \n### `AGENTS.md` (the workspace root): applies to every file in the workspace\n\nUse tabs.\n\
         \n### `api/v2/AGENTS.md`: applies to the files under `api/v2/`, and takes precedence there over \
         the AGENTS.md files above it\n\nReturn errors as JSON.\n"
    );
}

#[test]
fn a_cut_file_says_so_and_the_files_left_out_are_named() {
    let mut cut = offered("a", "First line.\n");
    (cut.size, cut.cut) = (5000, true);
    let left_out: Vec<String> = (0..22).map(|index| format!("f{index:02}/AGENTS.md")).collect();
    let text = text(&Scan { files: vec![cut], left_out, ..Scan::default() }, 4).unwrap();
    assert!(
        text.contains(
            "First line.\n\n[`a/AGENTS.md` is cut here: 12 of its 5000 bytes are shown, the most the 4 KiB \
             cap (`max_kb`) left room for. Read the file for the rest.]\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            "\nNot shown, past the 4 KiB cap (`max_kb`): `f00/AGENTS.md`, `f01/AGENTS.md`, `f02/AGENTS.md`, \
             `f03/AGENTS.md`, `f04/AGENTS.md`, `f05/AGENTS.md`, `f06/AGENTS.md`, `f07/AGENTS.md`, \
             `f08/AGENTS.md`, `f09/AGENTS.md`, `f10/AGENTS.md`, `f11/AGENTS.md`, `f12/AGENTS.md`, \
             `f13/AGENTS.md`, `f14/AGENTS.md`, `f15/AGENTS.md`, `f16/AGENTS.md`, `f17/AGENTS.md`, \
             `f18/AGENTS.md`, `f19/AGENTS.md` and 2 more. They apply to the files under their folders all \
             the same: read one before working there.\n"
        ),
        "{text}"
    );
}

#[test]
fn nothing_offered_no_instructions() {
    assert_eq!(text(&Scan::default(), 32), None);
}
