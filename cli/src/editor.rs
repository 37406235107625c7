//! The line editor at a terminal (reedline): history kept per deployment across runs, Ctrl-R
//! search, Tab completion of slash commands and of the values a choice view's command takes,
//! multi-line input (a pasted block stays one message; Alt-Enter starts a new line).
//!
//! Reedline blocks while it reads, so it lives on a thread of its own; the console asks it
//! for a line and awaits the answer. Between reads the terminal is back in its usual mode, so
//! Ctrl-C during a turn is the signal the turn's cancellation waits for.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use super::above_prompt;
use agent_host::unpoisoned::LockUnpoisoned as _;
use reedline::{
    ColumnarMenu, Completer, EditCommand, Emacs, FileBackedHistory, KeyCode, KeyModifiers, MenuBuilder,
    Prompt, PromptEditMode, PromptHistorySearch, PromptHistorySearchStatus, Reedline, ReedlineEvent,
    ReedlineMenu, Signal, Span, Suggestion, default_emacs_keybindings,
};

/// How many lines of history are kept.
const HISTORY_LINES: usize = 5_000;
const COMPLETION_MENU: &str = "completion_menu";

/// What a read gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    Line(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D, or the terminal went away.
    Ended,
}

/// What Tab completes: slash commands, and the values each choice command takes.
#[derive(Debug, Clone, Default)]
pub struct Completions {
    /// Command names with their slash (`/help`).
    pub commands: Vec<String>,
    /// A choice's command line (`/mode`) and the values it takes.
    pub arguments: Vec<(String, Vec<String>)>,
}

/// The history file of a deployment: beside its session store, named after it
/// (`sessions.db` → `sessions.history`), so each store has its own.
pub fn history_path(store: &Path) -> PathBuf {
    store.with_extension("history")
}

/// Whether the console can edit lines: stdin, stdout and stderr (where reedline draws) all a
/// terminal that is not `dumb`.
pub fn available() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
        && std::io::stderr().is_terminal()
        && std::env::var("TERM").map_or(true, |term| term != "dumb")
}

/// What the console asks the editor's thread for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A message: kept in history, completed.
    Message,
    /// An answer to a question: neither.
    Answer,
    /// One key, read raw with no Enter and no echo (the prompt is already written).
    Key,
}

struct Request {
    prompt: String,
    kind: Kind,
    reply: tokio::sync::oneshot::Sender<Read>,
}

/// The editor's thread, shared by the prompt loop and the approval prompt.
#[derive(Clone)]
pub struct LineEditor {
    requests: mpsc::Sender<Request>,
    completions: Arc<Mutex<Completions>>,
}

impl LineEditor {
    /// The editor, its history in `history` (a history that cannot be opened is kept in
    /// memory only, and said so).
    pub fn start(history: PathBuf) -> Self {
        let completions = Arc::new(Mutex::new(Completions::default()));
        let (requests, incoming) = mpsc::channel::<Request>();
        let shared = completions.clone();
        std::thread::Builder::new()
            .name("line-editor".into())
            .spawn(move || serve(incoming, history, shared))
            .expect("a thread for the line editor");
        Self { requests, completions }
    }

    pub fn set_completions(&self, completions: Completions) {
        *self.completions.lock_unpoisoned() = completions;
    }

    /// A message typed at `prompt`.
    pub async fn message(&self, prompt: &str) -> Read {
        self.ask(prompt, Kind::Message).await
    }

    /// An answer to a question, kept out of the history. Esc gives an empty one.
    pub async fn answer(&self, prompt: &str) -> Read {
        self.ask(prompt, Kind::Answer).await
    }

    /// One key pressed, no Enter needed: `Line` holding its character (empty for Enter or
    /// Esc), `Interrupted` for Ctrl-C, `Ended` for Ctrl-D. The caller has written the
    /// question already.
    pub async fn key(&self) -> Read {
        self.ask("", Kind::Key).await
    }

    async fn ask(&self, prompt: &str, kind: Kind) -> Read {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let request = Request { prompt: prompt.to_owned(), kind, reply };
        if self.requests.send(request).is_err() {
            return Read::Ended;
        }
        answer.await.unwrap_or(Read::Ended)
    }
}

fn serve(incoming: mpsc::Receiver<Request>, history: PathBuf, completions: Arc<Mutex<Completions>>) {
    // What arrives while a line is read is printed above the prompt (`above_prompt.rs`).
    let printer = above_prompt::printer();
    let printing = |editor: Reedline| {
        editor.with_external_printer(printer.clone()).with_poll_interval(above_prompt::LOOK)
    };
    let mut messages = printing(message_editor(&history, completions));
    let mut answers = printing(answer_editor());
    for request in incoming {
        let editor = match request.kind {
            Kind::Message => &mut messages,
            Kind::Answer => &mut answers,
            Kind::Key => {
                let _ = request.reply.send(read_key());
                continue;
            }
        };
        let read = {
            let _up = above_prompt::prompt_up(&printer);
            editor.read_line(&LinePrompt(request.prompt))
        };
        let read = match read {
            Ok(Signal::Success(line)) => Read::Line(line),
            Ok(Signal::CtrlC) => Read::Interrupted,
            Ok(_) | Err(_) => Read::Ended,
        };
        let _ = request.reply.send(read);
    }
}

/// One key press, the terminal in raw mode only while it is read (Ctrl-C is a key then, not
/// a signal).
fn read_key() -> Read {
    use crossterm::event::{self, Event, KeyEvent, KeyEventKind};
    if crossterm::terminal::enable_raw_mode().is_err() {
        return Read::Ended;
    }
    let read = loop {
        match event::read() {
            Ok(Event::Key(KeyEvent { code, modifiers, kind: KeyEventKind::Press, .. })) => {
                let control = modifiers.contains(KeyModifiers::CONTROL);
                match code {
                    KeyCode::Char('c') if control => break Read::Interrupted,
                    KeyCode::Char('d') if control => break Read::Ended,
                    KeyCode::Char(c) if !control => break Read::Line(c.to_string()),
                    KeyCode::Enter | KeyCode::Esc => break Read::Line(String::new()),
                    _ => {}
                }
            }
            Ok(_) => {}
            Err(_) => break Read::Ended,
        }
    };
    let _ = crossterm::terminal::disable_raw_mode();
    read
}

/// The editor of answers: no history, no completion; Esc answers nothing.
fn answer_editor() -> Reedline {
    let mut keys = default_emacs_keybindings();
    keys.add_binding(
        KeyModifiers::NONE,
        KeyCode::Esc,
        ReedlineEvent::Multiple(vec![ReedlineEvent::Edit(vec![EditCommand::Clear]), ReedlineEvent::Enter]),
    );
    Reedline::create().with_edit_mode(Box::new(Emacs::new(keys)))
}

fn message_editor(history: &Path, completions: Arc<Mutex<Completions>>) -> Reedline {
    let mut keys = default_emacs_keybindings();
    keys.add_binding(
        KeyModifiers::NONE,
        KeyCode::Tab,
        ReedlineEvent::UntilFound(vec![ReedlineEvent::Menu(COMPLETION_MENU.into()), ReedlineEvent::MenuNext]),
    );
    keys.add_binding(
        KeyModifiers::ALT,
        KeyCode::Enter,
        ReedlineEvent::Edit(vec![EditCommand::InsertNewline]),
    );
    let menu = ColumnarMenu::default().with_name(COMPLETION_MENU);
    let editor = Reedline::create()
        .with_completer(Box::new(SlashCompleter(completions)))
        .with_quick_completions(true)
        .with_partial_completions(true)
        .with_menu(ReedlineMenu::EngineCompleter(Box::new(menu)))
        .with_edit_mode(Box::new(Emacs::new(keys)))
        .use_bracketed_paste(true);
    match FileBackedHistory::with_file(HISTORY_LINES, history.to_path_buf()) {
        Ok(file) => editor.with_history(Box::new(file)),
        Err(error) => {
            eprintln!("warning: the console's history is not kept: {}: {error}", history.display());
            editor
        }
    }
}

struct SlashCompleter(Arc<Mutex<Completions>>);

impl Completer for SlashCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> Vec<Suggestion> {
        let completions = self.0.lock_unpoisoned();
        suggestions(&completions, &line[..pos.min(line.len())])
    }
}

/// What completes `typed` (the line up to the cursor).
fn suggestions(completions: &Completions, typed: &str) -> Vec<Suggestion> {
    let suggest = |value: &str, start: usize| Suggestion {
        value: value.to_owned(),
        span: Span::new(start, typed.len()),
        append_whitespace: true,
        ..Suggestion::default()
    };
    if !typed.starts_with('/') {
        return Vec::new();
    }
    match typed.split_once(' ') {
        None => completions.commands.iter().filter(|c| c.starts_with(typed)).map(|c| suggest(c, 0)).collect(),
        Some((command, argument)) => {
            let start = typed.len() - argument.len();
            completions
                .arguments
                .iter()
                .filter(|(line, _)| line.trim() == command)
                .flat_map(|(_, values)| values)
                .filter(|value| value.starts_with(argument))
                .map(|value| suggest(value, start))
                .collect()
        }
    }
}

/// The console's prompt (`[plan] > `), already escaped by the console.
struct LinePrompt(String);

impl Prompt for LinePrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.0)
    }

    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_indicator(&self, _: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("… ")
    }

    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        let failing =
            if matches!(search.status, PromptHistorySearchStatus::Failing) { "failing " } else { "" };
        Cow::Owned(format!("({failing}search: {}) ", search.term))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(completions: &Completions, typed: &str) -> Vec<(String, usize)> {
        suggestions(completions, typed).into_iter().map(|s| (s.value, s.span.start)).collect()
    }

    #[test]
    fn commands_complete_after_a_slash_and_choice_values_after_their_command() {
        let completions = Completions {
            commands: vec!["/help".into(), "/mode".into(), "/mcp".into()],
            arguments: vec![("/mode".into(), vec!["plan".into(), "execute".into()])],
        };
        assert_eq!(values(&completions, "/m"), [("/mode".into(), 0), ("/mcp".into(), 0)]);
        assert_eq!(values(&completions, "/mode ex"), [("execute".into(), 6)]);
        assert_eq!(values(&completions, "/mode "), [("plan".into(), 6), ("execute".into(), 6)]);
        assert!(values(&completions, "/help x").is_empty());
        assert!(values(&completions, "hello /m").is_empty(), "only a line that starts with a slash");
    }

    #[test]
    fn the_history_sits_beside_the_store() {
        assert_eq!(history_path(Path::new("/data/sessions.db")), Path::new("/data/sessions.history"));
    }
}
