//! One shell word: its text with quotes removed, whether it is literal, and the command
//! substitutions it holds.

use brush_parser::ParserOptions;
use brush_parser::word::{WordPiece, WordPieceWithSource, parse};

/// What a word is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WordInfo {
    /// The text with quotes and escapes removed; expansions keep their source (`$X`).
    pub text: String,
    /// Only plain, single-quoted, double-quoted-without-expansions text and escapes, and
    /// no unquoted glob or brace characters: the shell passes it on as written.
    pub literal: bool,
    /// Part of it is only known at run time (an expansion, a substitution, a glob).
    pub dynamic: bool,
    /// The command lines of the `$(…)` and backquote substitutions in it.
    pub substitutions: Vec<String>,
}

/// Reads one word as the shell's word grammar does.
pub fn read(raw: &str) -> WordInfo {
    let mut info = WordInfo { literal: true, ..WordInfo::default() };
    match parse(raw, &ParserOptions::default()) {
        Ok(pieces) => add_pieces(&pieces, raw, false, &mut info),
        Err(_) => {
            info.text = raw.to_owned();
            info.literal = false;
            info.dynamic = true;
        }
    }
    info
}

fn add_pieces(pieces: &[WordPieceWithSource], raw: &str, quoted: bool, info: &mut WordInfo) {
    for piece in pieces {
        let source = raw.get(piece.start_index..piece.end_index).unwrap_or(raw);
        match &piece.piece {
            WordPiece::Text(text) => {
                if !quoted && unquoted_expands(text) {
                    info.literal = false;
                    info.dynamic = true;
                }
                info.text.push_str(text);
            }
            WordPiece::SingleQuotedText(text) => info.text.push_str(text),
            WordPiece::EscapeSequence(escape) => {
                // `\` newline joins lines; any other escape stands for its character.
                let escaped = escape.strip_prefix('\\').unwrap_or(escape);
                if escaped != "\n" {
                    info.text.push_str(escaped);
                }
            }
            WordPiece::DoubleQuotedSequence(inner) => add_pieces(inner, raw, true, info),
            WordPiece::GettextDoubleQuotedSequence(inner) => {
                info.literal = false;
                add_pieces(inner, raw, true, info);
            }
            WordPiece::AnsiCQuotedText(text) => {
                info.literal = false;
                match ansi_c_decoded(text) {
                    Some(decoded) => info.text.push_str(&decoded),
                    None => not_literal(source, info),
                }
            }
            WordPiece::TildeExpansion(_) => {
                info.literal = false;
                info.text.push_str(source);
            }
            WordPiece::CommandSubstitution(line) => {
                info.substitutions.push(line.clone());
                not_literal(source, info);
            }
            WordPiece::BackquotedCommandSubstitution(line) => {
                let inner = line.strip_prefix('`').and_then(|l| l.strip_suffix('`')).unwrap_or(line);
                info.substitutions.push(backquoted_line(inner, quoted));
                not_literal(source, info);
            }
            WordPiece::ParameterExpansion(_) | WordPiece::ArithmeticExpression(_) => {
                // A substitution may hide inside (`${x:-$(rm y)}`): read it as a line of its own.
                if let Some(start) = source.find("$(").or_else(|| source.find('`')) {
                    info.substitutions.push(source[start..].to_owned());
                }
                not_literal(source, info);
            }
        }
    }
}

fn not_literal(source: &str, info: &mut WordInfo) {
    info.literal = false;
    info.dynamic = true;
    info.text.push_str(source);
}

/// Unquoted text the shell would still expand: globs, and bash's brace expansion.
fn unquoted_expands(text: &str) -> bool {
    text.contains(['*', '?', '['])
        || (text.contains('{') && text.contains('}') && (text.contains(',') || text.contains("..")))
}

/// The text of bash's `$'…'` with its escapes decoded; `None` for an escape not read here
/// (the word then counts as known only at run time).
fn ansi_c_decoded(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let number = |chars: &mut std::iter::Peekable<std::str::Chars>, radix: u32, most: usize| {
        let mut digits = String::new();
        while digits.len() < most && chars.peek().is_some_and(|c| c.is_digit(radix)) {
            digits.extend(chars.next());
        }
        u32::from_str_radix(&digits, radix).ok().and_then(char::from_u32)
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next()? {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            c @ ('\\' | '\'' | '"' | '?') => c,
            'x' => number(&mut chars, 16, 2)?,
            'u' => number(&mut chars, 16, 4)?,
            'U' => number(&mut chars, 16, 8)?,
            d @ '0'..='7' => {
                let mut digits = String::from(d);
                while digits.len() < 3 && chars.peek().is_some_and(|c| c.is_digit(8)) {
                    digits.extend(chars.next());
                }
                char::from_u32(u32::from_str_radix(&digits, 8).ok()?)?
            }
            _ => return None,
        };
        out.push(decoded);
    }
    Some(out)
}

/// The command line inside backquotes: a backslash before `$`, `` ` ``, `\` (and `"`
/// within double quotes) only escapes that character.
fn backquoted_line(inner: &str, quoted: bool) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && (matches!(next, '$' | '`' | '\\') || (quoted && next == '"'))
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}
