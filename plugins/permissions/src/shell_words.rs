//! The words of one simple command as the shell reads them: quotes and escapes removed
//! (`'r'm`, `\rm`, `"r"m` and `$'\x72m'` are all `rm`), and each word marked when it holds
//! something only known at run time (a variable, a glob, a brace list, a substitution).

/// A word after quote removal.
#[derive(Debug, Clone)]
pub struct Word {
    pub text: String,
    /// Holds an unquoted expansion (`$`, a glob, a brace list) or a substitution.
    pub dynamic: bool,
}

/// The words of one simple command, with quotes and escapes removed.
pub fn words(segment: &str) -> Vec<Word> {
    let chars: Vec<char> = segment.chars().collect();
    let mut words = Vec::new();
    let mut word: Option<Word> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            words.extend(word.take());
            i += 1;
            continue;
        }
        let current = word.get_or_insert_with(|| Word { text: String::new(), dynamic: false });
        match c {
            '\\' => {
                if let Some(escaped) = next {
                    current.text.push(escaped);
                }
                i += 2;
            }
            '\'' => {
                let end = chars[i + 1..].iter().position(|&q| q == '\'').map_or(chars.len(), |p| i + 1 + p);
                current.text.extend(&chars[i + 1..end]);
                i = end + 1;
            }
            '$' if next == Some('\'') => {
                i = ansi_c(&chars, i + 2, &mut current.text);
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    match (chars[i], chars.get(i + 1)) {
                        ('\\', Some(&escaped)) if matches!(escaped, '$' | '`' | '"' | '\\') => {
                            current.text.push(escaped);
                            i += 2;
                        }
                        ('$', Some(&after))
                            if after.is_alphanumeric()
                                || matches!(after, '_' | '{' | '(' | '@' | '*' | '#' | '?' | '!' | '-') =>
                        {
                            current.dynamic = true;
                            current.text.push('$');
                            i += 1;
                        }
                        (other, _) => {
                            current.text.push(other);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            '$' | '*' | '?' | '[' => {
                current.dynamic |= c != '$' || next.is_some_and(|n| !n.is_whitespace());
                current.text.push(c);
                i += 1;
            }
            '{' if chars[i + 1..]
                .iter()
                .take_while(|ch| !ch.is_whitespace())
                .any(|&ch| ch == ',' || ch == '.') =>
            {
                // A brace list (`{r,}m`) expands into other words.
                current.dynamic = true;
                current.text.push(c);
                i += 1;
            }
            _ => {
                current.text.push(c);
                i += 1;
            }
        }
    }
    words.extend(word);
    words
}

/// Decodes a `$'…'` string from `start` (after the opening quote) into `out`; returns the
/// index after the closing quote.
fn ansi_c(chars: &[char], start: usize, out: &mut String) -> usize {
    let mut i = start;
    while i < chars.len() && chars[i] != '\'' {
        if chars[i] != '\\' || i + 1 >= chars.len() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let escape = chars[i + 1];
        i += 2;
        let simple = match escape {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            'x' | 'u' | 'U' | '0'..='7' => None,
            other => Some(other),
        };
        if let Some(decoded) = simple {
            out.push(decoded);
            continue;
        }
        let (radix, max, mut digits) = match escape {
            'x' => (16, 2, String::new()),
            'u' => (16, 4, String::new()),
            'U' => (16, 8, String::new()),
            octal => (8, 2, octal.to_string()),
        };
        while digits.len() < max + usize::from(radix == 8) && i < chars.len() && chars[i].is_digit(radix) {
            digits.push(chars[i]);
            i += 1;
        }
        match u32::from_str_radix(&digits, radix).ok().and_then(char::from_u32) {
            Some(decoded) => out.push(decoded),
            None => out.push_str(&digits),
        }
    }
    i + 1
}
