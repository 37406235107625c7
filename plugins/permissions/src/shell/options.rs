//! Command-line options as getopt reads them: short options letter by letter (`-iS'…'` is
//! `-i` then `-S` with the value `…`), values attached or in the next word, and long
//! options by any unambiguous prefix (`--to-com=` is `--to-command=`).

use super::word::WordInfo;

/// One option read, with its value when it takes one.
#[derive(Debug)]
pub struct Opt {
    /// The option's full name (`-S`, `--split-string`).
    pub name: String,
    pub value: Option<WordInfo>,
}

/// Reads the options at `args[*index]` (one word, or two when a value follows), moving
/// `index` past them. `None` when that word is not an option (`-` and `--` are not).
/// `valued` lists the options that take a value; a long one also matches its prefixes.
pub fn read(args: &[WordInfo], index: &mut usize, valued: &[&str]) -> Option<Vec<Opt>> {
    let arg = args.get(*index)?;
    let text = arg.text.as_str();
    if text == "-" || text == "--" || !text.starts_with('-') {
        return None;
    }
    *index += 1;
    let part = |value: &str| WordInfo { text: value.to_owned(), ..arg.clone() };
    if let Some(long) = text.strip_prefix("--") {
        let (given, attached) = match long.split_once('=') {
            Some((name, value)) => (name, Some(part(value))),
            None => (long, None),
        };
        let full = long_name(given, valued);
        let value = match attached {
            Some(value) => Some(value),
            None if valued.contains(&full.as_str()) => next(args, index),
            None => None,
        };
        return Some(vec![Opt { name: full, value }]);
    }
    let mut found = Vec::new();
    let letters = &text[1..];
    for (at, letter) in letters.char_indices() {
        let name = format!("-{letter}");
        if valued.contains(&name.as_str()) {
            let rest = &letters[at + letter.len_utf8()..];
            let value = if rest.is_empty() { next(args, index) } else { Some(part(rest)) };
            found.push(Opt { name, value });
            return Some(found);
        }
        found.push(Opt { name, value: None });
    }
    Some(found)
}

fn next(args: &[WordInfo], index: &mut usize) -> Option<WordInfo> {
    let value = args.get(*index).cloned();
    *index += 1;
    value
}

/// The valued long option `--given` abbreviates, or `--given` itself.
fn long_name(given: &str, valued: &[&str]) -> String {
    let exact = format!("--{given}");
    if valued.contains(&exact.as_str()) || given.is_empty() {
        return exact;
    }
    valued
        .iter()
        .find(|option| option.strip_prefix("--").is_some_and(|o| o.starts_with(given)))
        .map_or(exact, |option| (*option).to_owned())
}

/// Whether `text` is the long option `full` or an abbreviation of it (at least `least`
/// letters), with or without an attached value: the value, or `""` when none is attached.
pub fn long_value<'a>(text: &'a str, full: &str, least: usize) -> Option<&'a str> {
    let given = text.strip_prefix("--")?;
    let (name, value) = given.split_once('=').unwrap_or((given, ""));
    let full = full.strip_prefix("--").unwrap_or(full);
    (name.len() >= least.min(full.len()) && full.starts_with(name)).then_some(value)
}
