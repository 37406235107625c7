//! Every command a parsed line may run, for deny and ask rules: simple commands anywhere
//! in the tree (lists, pipelines, subshells, groups, loops, `if` and `case` bodies,
//! functions), the lines of substitutions, and what wrappers, shells, `eval`, `trap` and
//! `find -exec` run in turn.

use brush_parser::ParserOptions;
use brush_parser::ast::{
    AssignmentValue, Command as AstCommand, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList,
    ElseClause, ExtendedTestExpr, IoFileRedirectTarget, IoRedirect, Program, SimpleCommand, Word,
};
use brush_parser::word::{WordPiece, WordPieceWithSource, parse_heredoc};

use super::parse;
use super::word::{self, WordInfo};
use super::wrappers;

/// A command the line may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The program (without its folder) and its arguments, unquoted, one space apart.
    pub text: String,
    /// The same with the program as written (`/bin/rm -rf x`).
    pub written: String,
    /// What it runs is only known at run time (`$CMD`, `… | sh`, `python -c`), or the
    /// line could not be read: deny and ask rules count it as a match.
    pub dynamic: bool,
    /// More arguments are added at run time (`xargs rm`): a rule matches if some
    /// continuation of the text would.
    pub open_ended: bool,
}

impl Command {
    /// A line the grammar could not read: it may run anything.
    pub fn unreadable(line: &str, why: &str) -> Command {
        Command::dynamic(format!("{} — {why}", line.trim()))
    }

    pub(super) fn dynamic(text: String) -> Command {
        Command { written: text.clone(), text, dynamic: true, open_ended: false }
    }
}

/// Nesting of shells, `eval` and substitutions read before giving up (the rest is dynamic).
pub const MAX_DEPTH: usize = 6;

/// Adds every command `program` may run.
pub fn collect(program: &Program, depth: usize, out: &mut Vec<Command>) {
    for list in &program.complete_commands {
        add_list(list, depth, out);
    }
}

/// Parses `line` and adds what it runs; a line that cannot be read counts as dynamic.
pub fn collect_line(line: &str, depth: usize, out: &mut Vec<Command>) {
    if depth > MAX_DEPTH {
        out.push(Command::dynamic(format!("{} (nested too deeply to read)", line.trim())));
        return;
    }
    for reading in parse::readings(line) {
        match reading {
            Ok(program) => collect(&program, depth, out),
            Err(error) => out.push(Command::unreadable(line, &error)),
        }
    }
}

fn add_list(list: &CompoundList, depth: usize, out: &mut Vec<Command>) {
    for command in parse::pipelines(list).flat_map(|pipeline| &pipeline.seq) {
        add_command(command, depth, out);
    }
}

fn add_command(command: &AstCommand, depth: usize, out: &mut Vec<Command>) {
    match command {
        AstCommand::Simple(simple) => add_simple(simple, depth, out),
        AstCommand::Compound(compound, redirects) => {
            add_compound(compound, depth, out);
            for redirect in redirects.iter().flat_map(|r| r.0.iter()) {
                add_redirect(redirect, depth, out);
            }
        }
        // A function's body runs whenever it is called, which a line may well do.
        AstCommand::Function(function) => {
            add_compound(&function.body.0, depth, out);
            for redirect in function.body.1.iter().flat_map(|r| r.0.iter()) {
                add_redirect(redirect, depth, out);
            }
        }
        AstCommand::ExtendedTest(test, redirects) => {
            add_test(&test.expr, depth, out);
            for redirect in redirects.iter().flat_map(|r| r.0.iter()) {
                add_redirect(redirect, depth, out);
            }
        }
    }
}

fn add_compound(compound: &CompoundCommand, depth: usize, out: &mut Vec<Command>) {
    match compound {
        CompoundCommand::BraceGroup(group) => add_list(&group.list, depth, out),
        CompoundCommand::Subshell(subshell) => add_list(&subshell.list, depth, out),
        CompoundCommand::ForClause(for_clause) => {
            for value in for_clause.values.iter().flatten() {
                add_word(value, depth, out);
            }
            add_list(&for_clause.body.list, depth, out);
        }
        CompoundCommand::ArithmeticForClause(for_clause) => add_list(&for_clause.body.list, depth, out),
        CompoundCommand::CaseClause(case) => {
            add_word(&case.value, depth, out);
            for item in &case.cases {
                for pattern in &item.patterns {
                    add_word(pattern, depth, out);
                }
                if let Some(list) = &item.cmd {
                    add_list(list, depth, out);
                }
            }
        }
        CompoundCommand::IfClause(if_clause) => {
            add_list(&if_clause.condition, depth, out);
            add_list(&if_clause.then, depth, out);
            for ElseClause { condition, body } in if_clause.elses.iter().flatten() {
                if let Some(condition) = condition {
                    add_list(condition, depth, out);
                }
                add_list(body, depth, out);
            }
        }
        CompoundCommand::WhileClause(clause) | CompoundCommand::UntilClause(clause) => {
            add_list(&clause.0, depth, out);
            add_list(&clause.1.list, depth, out);
        }
        CompoundCommand::Coprocess(coprocess) => add_command(&coprocess.body, depth, out),
        CompoundCommand::Arithmetic(arithmetic) => {
            if arithmetic.expr.value.contains("$(") || arithmetic.expr.value.contains('`') {
                collect_line(&arithmetic.expr.value, depth + 1, out);
            }
        }
    }
}

fn add_test(expr: &ExtendedTestExpr, depth: usize, out: &mut Vec<Command>) {
    match expr {
        ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
            add_test(a, depth, out);
            add_test(b, depth, out);
        }
        ExtendedTestExpr::Not(a) | ExtendedTestExpr::Parenthesized(a) => add_test(a, depth, out),
        ExtendedTestExpr::UnaryTest(_, w) => {
            add_word(w, depth, out);
        }
        ExtendedTestExpr::BinaryTest(_, a, b) => {
            add_word(a, depth, out);
            add_word(b, depth, out);
        }
    }
}

/// Reads a word and adds the lines of its substitutions.
fn add_word(word: &Word, depth: usize, out: &mut Vec<Command>) -> WordInfo {
    let info = word::read(&word.value);
    for line in &info.substitutions {
        collect_line(line, depth + 1, out);
    }
    info
}

fn add_redirect(redirect: &IoRedirect, depth: usize, out: &mut Vec<Command>) {
    match redirect {
        IoRedirect::File(_, _, target) => match target {
            IoFileRedirectTarget::Filename(w) | IoFileRedirectTarget::Duplicate(w) => {
                add_word(w, depth, out);
            }
            IoFileRedirectTarget::ProcessSubstitution(_, subshell) => add_list(&subshell.list, depth, out),
            IoFileRedirectTarget::Fd(_) => {}
        },
        IoRedirect::HereDocument(_, doc) if doc.requires_expansion => {
            if let Ok(pieces) = parse_heredoc(&doc.doc.value, &ParserOptions::default()) {
                add_heredoc_pieces(&pieces, depth, out);
            } else {
                out.push(Command::dynamic(format!("a here-document ({})", doc.doc.value.trim())));
            }
        }
        IoRedirect::HereDocument(..) => {}
        IoRedirect::HereString(_, w) | IoRedirect::OutputAndError(w, _) => {
            add_word(w, depth, out);
        }
    }
}

fn add_heredoc_pieces(pieces: &[WordPieceWithSource], depth: usize, out: &mut Vec<Command>) {
    for piece in pieces {
        match &piece.piece {
            WordPiece::CommandSubstitution(line) | WordPiece::BackquotedCommandSubstitution(line) => {
                collect_line(line.trim_matches('`'), depth + 1, out);
            }
            WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                add_heredoc_pieces(inner, depth, out);
            }
            _ => {}
        }
    }
}

fn add_simple(simple: &SimpleCommand, depth: usize, out: &mut Vec<Command>) {
    let mut argv: Vec<WordInfo> = Vec::new();
    let prefix = simple.prefix.iter().flat_map(|p| p.0.iter());
    let suffix = simple.suffix.iter().flat_map(|s| s.0.iter());
    for item in prefix {
        add_item(item, false, depth, out, &mut argv);
    }
    if let Some(program) = &simple.word_or_name {
        argv.push(add_word(program, depth, out));
    }
    for item in suffix {
        add_item(item, true, depth, out, &mut argv);
    }
    wrappers::resolve(&argv, depth, out);
}

/// Adds what one item of a simple command runs; its words go to `argv`, and so do
/// `NAME=VALUE` words after the program (`alias r=rm`, `export X=1`).
fn add_item(
    item: &CommandPrefixOrSuffixItem,
    after_program: bool,
    depth: usize,
    out: &mut Vec<Command>,
    argv: &mut Vec<WordInfo>,
) {
    if after_program && let CommandPrefixOrSuffixItem::AssignmentWord(_, word) = item {
        argv.push(add_word(word, depth, out));
        return;
    }
    match item {
        CommandPrefixOrSuffixItem::Word(w) => argv.push(add_word(w, depth, out)),
        CommandPrefixOrSuffixItem::IoRedirect(redirect) => add_redirect(redirect, depth, out),
        CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => add_list(&subshell.list, depth, out),
        CommandPrefixOrSuffixItem::AssignmentWord(assignment, _) => match &assignment.value {
            AssignmentValue::Scalar(w) => {
                add_word(w, depth, out);
            }
            AssignmentValue::Array(items) => {
                for (key, value) in items {
                    if let Some(key) = key {
                        add_word(key, depth, out);
                    }
                    add_word(value, depth, out);
                }
            }
        },
    }
}
