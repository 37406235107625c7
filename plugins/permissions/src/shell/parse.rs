//! Parses a line the way bash and the way dash would read it.

use brush_parser::ast::{AndOr, CompoundList, Pipeline, Program};
use brush_parser::{Parser, ParserOptions};

/// The options of the dash reading: no bash-only operators (`&>`, `<<<`, `|&`).
fn dash_options() -> ParserOptions {
    ParserOptions { sh_mode: true, posix_mode: true, ..ParserOptions::default() }
}

/// Parses `line` as one program under `options`; the error is said in words.
pub fn program(line: &str, options: &ParserOptions) -> Result<Program, String> {
    Parser::new(std::io::BufReader::new(line.as_bytes()), options)
        .parse_program()
        .map_err(|error| format!("the shell grammar cannot read it ({error})"))
}

/// The bash reading of `line`, then the dash reading: they differ in more than quoting
/// (`((rm x))` is arithmetic to bash and two subshells to dash).
pub fn readings(line: &str) -> Vec<Result<Program, String>> {
    let dash_line = as_dash_reads(line);
    // Where the sh grammar gives up (`<(…)`, which dash refuses too), the bash grammar
    // still gives the rewritten line's structure.
    let dash = program(&dash_line, &dash_options())
        .or_else(|error| program(&dash_line, &ParserOptions::default()).map_err(|_| error));
    vec![program(line, &ParserOptions::default()), dash]
}

/// Every pipeline of `list`, whether `;`, `&`, `&&` or `||` joins it to the others.
pub fn pipelines(list: &CompoundList) -> impl Iterator<Item = &Pipeline> {
    list.0.iter().flat_map(|item| {
        let rest = item.0.additional.iter().map(|a| match a {
            AndOr::And(p) | AndOr::Or(p) => p,
        });
        std::iter::once(&item.0.first).chain(rest)
    })
}

/// `line` rewritten so that bash grammar reads it as dash does: dash has no `$'…'` or
/// `$"…"` quoting, so outside quotes their `$` is a plain character followed by an
/// ordinary quote, which bash writes `'$'`. (Inside quotes and comments `$'` means the
/// same to both; substitutions are read again as lines of their own.)
fn as_dash_reads(line: &str) -> String {
    #[derive(PartialEq)]
    enum At {
        Plain,
        Single,
        Double,
        Comment,
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut at = At::Plain;
    let mut chars = line.chars().peekable();
    let mut word_start = true;
    while let Some(c) = chars.next() {
        match at {
            At::Plain => match c {
                '\\' => {
                    out.push(c);
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                    word_start = false;
                    continue;
                }
                '$' if matches!(chars.peek(), Some('\'' | '"')) => {
                    out.push_str("'$'");
                    word_start = false;
                    continue;
                }
                '\'' => at = At::Single,
                '"' => at = At::Double,
                '#' if word_start => at = At::Comment,
                _ => {}
            },
            At::Single if c == '\'' => at = At::Plain,
            At::Double if c == '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
                continue;
            }
            At::Double if c == '"' => at = At::Plain,
            At::Comment if c == '\n' => at = At::Plain,
            _ => {}
        }
        word_start = c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>');
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    /// Each rewritten line, run by bash, prints what the original prints under dash.
    #[test]
    fn the_rewrite_reads_as_dash() {
        for line in [
            "echo $'\\' ; echo X ; #'",
            "echo 'a$'b",
            "echo \"a$'b\"",
            "echo $\"x\"",
            "echo \\$'y'",
            "grep 'a$' x",
            "echo x#$'y'",
            "echo # $'a\n echo b",
        ] {
            let dash = std::process::Command::new("dash").arg("-c").arg(line).output().expect("dash");
            let bash = std::process::Command::new("bash")
                .arg("-c")
                .arg(super::as_dash_reads(line))
                .output()
                .expect("bash");
            assert_eq!(
                String::from_utf8_lossy(&bash.stdout),
                String::from_utf8_lossy(&dash.stdout),
                "{line:?}"
            );
        }
    }
}
