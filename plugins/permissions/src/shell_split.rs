//! Splits a shell command line into the simple commands it runs, so that a rule for
//! `git status` cannot be stretched over `git status && rm -rf /`.

/// One simple command of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The command text, trimmed.
    pub text: String,
    /// True when the part hides more than it shows: a command substitution (`$(`, backticks)
    /// or a redirection (`>`, `<`). Allow rules never vouch for such a part.
    pub opaque: bool,
}

/// Splits on `&&`, `||`, `;`, `|`, `&` and newlines. Quotes are read as the shell reads
/// them — nothing is special in `'…'`, a backslash escapes in `"…"` and `$'…'` — and a
/// backslash-newline joins two lines. A substitution or redirection anywhere (even in
/// quotes) marks its part opaque: being conservative costs an extra question, being clever
/// costs a deleted disk.
pub fn split_command(line: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut opaque = false;
    let mut quote: Option<Quote> = None;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let flush = |current: &mut String, opaque: &mut bool, parts: &mut Vec<Part>| {
        let text = current.trim();
        if !text.is_empty() {
            parts.push(Part { text: text.to_owned(), opaque: *opaque });
        }
        current.clear();
        *opaque = false;
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '`' || (c == '$' && next == Some('(')) || c == '>' || c == '<' {
            opaque = true;
        }
        // A backslash-newline disappears before anything else reads the line (but not
        // inside single quotes).
        if c == '\\' && next == Some('\n') && !matches!(quote, Some(Quote::Single)) {
            i += 2;
            continue;
        }
        match quote {
            Some(Quote::Single) => {
                current.push(c);
                if c == '\'' {
                    quote = None;
                }
            }
            Some(escaping @ (Quote::Double | Quote::AnsiC)) => {
                current.push(c);
                let closing = if escaping == Quote::Double { '"' } else { '\'' };
                if c == '\\'
                    && let Some(escaped) = next
                {
                    current.push(escaped);
                    i += 1;
                } else if c == closing {
                    quote = None;
                }
            }
            None => match c {
                '\'' => {
                    quote = Some(Quote::Single);
                    current.push(c);
                }
                '"' => {
                    quote = Some(Quote::Double);
                    current.push(c);
                }
                '$' if next == Some('\'') => {
                    quote = Some(Quote::AnsiC);
                    current.push_str("$'");
                    i += 1;
                }
                '\\' if next.is_some() => {
                    current.push(c);
                    current.push(chars[i + 1]);
                    i += 1;
                }
                ';' | '\n' | '|' | '&' => {
                    flush(&mut current, &mut opaque, &mut parts);
                    if matches!((c, next), ('&', Some('&')) | ('|', Some('|'))) {
                        i += 1;
                    }
                }
                _ => current.push(c),
            },
        }
        i += 1;
    }
    flush(&mut current, &mut opaque, &mut parts);
    parts
}

/// The quoting the splitter is inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    /// `'…'`: nothing is special until the closing quote.
    Single,
    /// `"…"`: a backslash escapes the next character.
    Double,
    /// `$'…'`: a backslash escapes the next character, even a `'`.
    AnsiC,
}
