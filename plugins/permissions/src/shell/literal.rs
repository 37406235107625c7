//! The strict reading allow rules rely on: a line of simple commands whose every word is
//! literal, whose redirections only duplicate descriptors or use `/dev/null`, and none of
//! which is a shell, `eval`, `trap` or `source` running lines of its own.

use brush_parser::ast::{
    Command, CommandPrefixOrSuffixItem, CompoundList, IoFileRedirectTarget, IoRedirect, Program,
    SimpleCommand,
};

use super::{parse, word, wrappers};

/// The program's simple commands as text, or `None` when any part is not literal.
pub fn simple_commands(program: &Program) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    for list in &program.complete_commands {
        add_list(list, &mut parts)?;
    }
    Some(parts)
}

fn add_list(list: &CompoundList, parts: &mut Vec<String>) -> Option<()> {
    for command in parse::pipelines(list).flat_map(|pipeline| &pipeline.seq) {
        match command {
            Command::Simple(simple) => parts.push(simple_text(simple)?),
            // Compound commands, functions and `[[ … ]]` are not read for allow rules.
            _ => return None,
        }
    }
    Some(())
}

fn simple_text(command: &SimpleCommand) -> Option<String> {
    // Assignments before the program (`PAGER=…`, `LD_PRELOAD=…`) change what it does.
    if let Some(prefix) = &command.prefix {
        for item in &prefix.0 {
            match item {
                CommandPrefixOrSuffixItem::IoRedirect(redirect) if harmless(redirect) => {}
                _ => return None,
            }
        }
    }
    let program = literal(&command.word_or_name.as_ref()?.value)?;
    if wrappers::runs_lines(program.rsplit('/').next().unwrap_or_default()) {
        return None;
    }
    let mut words = vec![program];
    if let Some(suffix) = &command.suffix {
        for item in &suffix.0 {
            match item {
                // `make CC=cc`: after the program, `NAME=VALUE` is an argument like any other.
                CommandPrefixOrSuffixItem::Word(w) | CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                    words.push(literal(&w.value)?)
                }
                CommandPrefixOrSuffixItem::IoRedirect(redirect) if harmless(redirect) => {}
                _ => return None,
            }
        }
    }
    Some(words.join(" "))
}

fn literal(raw: &str) -> Option<String> {
    let info = word::read(raw);
    info.literal.then_some(info.text)
}

/// A descriptor duplication, `/dev/null`, or a here-document without expansions.
fn harmless(redirect: &IoRedirect) -> bool {
    match redirect {
        IoRedirect::File(_, _, IoFileRedirectTarget::Fd(_)) => true,
        IoRedirect::File(_, _, IoFileRedirectTarget::Duplicate(target)) => {
            literal(&target.value).is_some_and(|t| t == "-" || t.chars().all(|c| c.is_ascii_digit()))
        }
        IoRedirect::File(_, _, IoFileRedirectTarget::Filename(target)) => {
            literal(&target.value).is_some_and(|t| t == "/dev/null")
        }
        IoRedirect::HereDocument(_, doc) => !doc.requires_expansion,
        // `<<<` and `&>` are bash's; dash reads them otherwise.
        _ => false,
    }
}
