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
                info.text.push_str(text);
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
                info.substitutions.push(inner.replace("\\`", "`").replace("\\\\", "\\"));
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
