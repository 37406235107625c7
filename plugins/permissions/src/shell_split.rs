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

/// Splits on `&&`, `||`, `;`, `|`, `&` and newlines. Quotes are respected, but a
/// substitution or redirection anywhere (even in quotes) marks its part opaque: being
/// conservative costs an extra question, being clever costs a deleted disk.
pub fn split_command(line: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut opaque = false;
    let mut quote: Option<char> = None;
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
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                current.push(c);
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    current.push(c);
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
