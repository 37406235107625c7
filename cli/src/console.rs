//! The interactive console: read a line, run a turn (or a /command), repeat.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines, Stdin};
use tokio::sync::Mutex;

use super::Status;
use super::children_command::children_command;
use super::choice_options;
use super::command_sink::CommandSink;
use super::editor::{self, Completions, LineEditor, Read};
use super::json::compact_json;
use super::render::{colors_on, rich_on};
use super::resume_hint::resume_command;
use super::startup::one_turn;
use super::status_line::status_line;
use super::tool_results::{KEPT_RESULTS, Keeping, KeptResults};
use super::width;
use agent_host::agent::{ApprovalAnswer, ApprovalRequest, Approver, BUILT_IN_COMMANDS, Host, SessionHandle};
use agent_host::events::{EventSink, Widget, thousands};
use agent_host::model::tokens::InUse;
use agent_host::sanitize::{multi_line, one_line};

/// Said after the offline demo's turn, when the console stays open.
const DEMO_BANNER: &str = "That was the offline demo: a scripted model, the real plugins. The console stays open \
     to look around: what the plugins show is drawn above, /help lists their commands, /plugins \
     what is loaded. The script has nothing more to say; give \
     [model] an endpoint to talk to a real model. Ctrl-D leaves.";

/// Said as the console opens at a terminal, where the line editor reads.
const GREETING: &str = "Type a message, /help for commands (Tab completes them), Alt-Enter for a new line, \
     Ctrl-R to search what you typed before, Ctrl-C to stop a turn, Ctrl-D to leave.";

/// The console's own prose: at a terminal broken between words to its width now (the
/// terminal would break it mid-word); elsewhere one line, for whatever reads it to wrap.
fn say(text: &str) {
    if rich_on() {
        for line in width::wrap_words(text, width::columns(), 0) {
            println!("{line}");
        }
    } else {
        println!("{text}");
    }
}

/// Lines from stdin, shared by the prompt loop and the approval prompt.
type Input = Arc<Mutex<Lines<BufReader<Stdin>>>>;

fn stdin_lines() -> Input {
    Arc::new(Mutex::new(BufReader::new(tokio::io::stdin()).lines()))
}

/// Where typed lines come from: the line editor at a terminal, plain lines elsewhere.
#[derive(Clone)]
enum Keyboard {
    Editor(LineEditor),
    Lines(Input),
}

impl Keyboard {
    async fn message(&self, prompt: &str) -> Read {
        match self {
            Self::Editor(editor) => editor.message(prompt).await,
            Self::Lines(input) => read_line(input, prompt).await.map_or(Read::Ended, Read::Line),
        }
    }

    async fn answer(&self, prompt: &str) -> Read {
        match self {
            Self::Editor(editor) => editor.answer(prompt).await,
            Self::Lines(input) => read_line(input, prompt).await.map_or(Read::Ended, Read::Line),
        }
    }

    /// A choice at `prompt`: one key at a terminal (no Enter), a line elsewhere. `again`
    /// after an answer that meant nothing: the key's prompt is on the screen still.
    async fn choice(&self, prompt: &str, again: bool) -> Read {
        match self {
            Self::Editor(editor) => {
                if !again {
                    let mut out = tokio::io::stdout();
                    let _ = out.write_all(prompt.as_bytes()).await;
                    let _ = out.flush().await;
                }
                editor.key().await
            }
            Self::Lines(input) => read_line(input, prompt).await.map_or(Read::Ended, Read::Line),
        }
    }
}

async fn read_line(input: &Input, prompt: &str) -> Option<String> {
    let mut out = tokio::io::stdout();
    let _ = out.write_all(prompt.as_bytes()).await;
    let _ = out.flush().await;
    let mut lines = input.lock().await;
    tokio::select! {
        line = lines.next_line() => line.ok().flatten(),
        _ = tokio::signal::ctrl_c() => None,
    }
}

/// The console on `session`; with `demo`, the offline demo's prompt runs first, and the
/// banner says what is worth trying after it.
pub async fn run(
    host: Arc<Host>,
    session: SessionHandle,
    sink: &dyn EventSink,
    demo: Option<&str>,
) -> Status {
    let keeping = Keeping::new(sink);
    let sink: &dyn EventSink = &keeping;
    let keyboard = if editor::available() {
        let store = host.config().resolve(&host.config().storage.path);
        Keyboard::Editor(LineEditor::start(editor::history_path(&store)))
    } else {
        Keyboard::Lines(stdin_lines())
    };
    let approver = ConsoleApprover::on(keyboard.clone());
    let rich = rich_on();
    match demo {
        Some(prompt) => {
            one_turn(&host, &session, prompt, sink, &approver).await;
            say(DEMO_BANNER);
        }
        None if matches!(keyboard, Keyboard::Editor(_)) => say(GREETING),
        None => say("Type a message, /help for commands, Ctrl-D to leave."),
    }
    // A Ctrl-C at the prompt asks to confirm; a second one in a row leaves.
    let mut interrupted = false;
    loop {
        let prompt = prompt_with_status(&host, &session, sink).await;
        if let Keyboard::Editor(editor) = &keyboard {
            editor.set_completions(completions(&host, &session).await);
        }
        let line = match keyboard.message(&prompt).await {
            Read::Line(line) => line,
            Read::Interrupted if !interrupted => {
                interrupted = true;
                say("(Ctrl-C again or Ctrl-D to leave; the session is kept)");
                continue;
            }
            Read::Interrupted | Read::Ended => {
                println!();
                return leave(&host, &session).await;
            }
        };
        interrupted = false;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if matches!(line, "/quit" | "/exit") {
            return leave(&host, &session).await;
        }
        if let Some(shown) = show_command(line, &keeping.results()) {
            match shown {
                Ok(text) => println!("{text}"),
                Err(text) => eprintln!("{text}"),
            }
            continue;
        }
        if let Some(shown) = children_command(line, &host, &session).await {
            match shown {
                Ok(text) => println!("{text}"),
                Err(text) => eprintln!("{text}"),
            }
            continue;
        }
        let mut prompt = line.to_owned();
        if agent_host::agent::is_command(line) {
            let mut session = session.lock().await;
            let command_sink = CommandSink::new(sink);
            let answer = host.command(&mut session, line, &command_sink).await;
            command_sink.answered(&answer);
            match answer {
                // Plugin commands answer with their own text; listings carry plugin names. A
                // command whose effect a view shows may answer with nothing.
                Ok(text) if text.trim().is_empty() => {}
                Ok(text) if line == "/help" => println!("{}\n{CONSOLE_HELP}", multi_line(&text)),
                Ok(text) => println!("{}", multi_line(&text)),
                Err(text) => eprintln!("{}", multi_line(&text)),
            }
            if let Some(options) = choice_options::listing(line, &session.views().current()) {
                println!("{options}");
            }
            // A plugin may queue a turn after a command (a loop set or resumed starts working).
            match host.queued_turn(&mut session, sink).await {
                Some(queued) => prompt = queued,
                None => continue,
            }
        }
        // Ctrl-C at an approval prompt (the editor reads keys raw there, so it is no signal)
        // cancels the turn as it does anywhere else in it.
        tokio::select! {
            _ = one_turn(&host, &session, &prompt, sink, &approver) => {}
            _ = approver.interrupt.notified() => {}
        }
        if rich {
            let session = session.lock().await;
            let tokens = context_badge(session.context().in_use(), host.budget().window);
            let line = status_line(&session.views().current(), tokens, session.id());
            println!("\x1b[2m{}\x1b[0m", width::fit(&line, width::columns()));
        }
    }
}

/// Leaving: the session is kept, and the line that opens it again is the last thing said.
async fn leave(host: &Host, session: &SessionHandle) -> Status {
    let id = session.lock().await.id().to_owned();
    let command = resume_command(&host.config().source.file, &id);
    // The command on a line of its own, never broken: it is there to be copied.
    println!("The session is kept; resume it with:\n  {}", one_line(&command));
    Status::Done
}

/// The console's own commands, after the host's in `/help`.
const CONSOLE_HELP: &str =
    "/show [N]          the N-th most recent tool result of this console, whole (1, the last, by default)
/children [N|ID]   the session's child agents; with a number or session id, one's transcript";

/// `/show [N]`: the `n`-th most recent tool result, whole, escaped, no markdown applied;
/// `None` for any other line.
fn show_command(line: &str, results: &KeptResults) -> Option<Result<String, String>> {
    let argument = line.strip_prefix("/show")?;
    if !(argument.is_empty() || argument.starts_with(char::is_whitespace)) {
        return None;
    }
    let n = match argument.trim() {
        "" => 1,
        n => match n.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => return Some(Err(format!("usage: /show [N], N from 1 (the last result) to {KEPT_RESULTS}"))),
        },
    };
    let Some(result) = results.recent(n) else {
        return Some(Err(match results.len() {
            0 => "no tool result yet in this console".to_owned(),
            kept => format!("only {kept} tool results are kept: /show 1 to /show {kept}"),
        }));
    };
    let how = if result.ok { "ok" } else { "failed" };
    let cut = match result.cut {
        0 => String::new(),
        bytes => format!("\n… {bytes} more bytes not kept"),
    };
    Some(Ok(format!(
        "── result {n}: {} ({how}) ──\n{}{cut}\n── end of result {n} ──",
        one_line(&result.tool),
        multi_line(result.output.trim_end_matches('\n'))
    )))
}

/// What Tab completes now: the host's commands and the plugins', and the values of each
/// choice a command moves.
async fn completions(host: &Host, session: &SessionHandle) -> Completions {
    let mut commands: Vec<String> = BUILT_IN_COMMANDS.iter().map(|name| format!("/{name}")).collect();
    commands.extend(["/show", "/children", "/quit", "/exit"].map(str::to_owned));
    for plugin in host.plugins().plugins() {
        commands.extend(plugin.commands().iter().map(|command| format!("/{}", command.name)));
    }
    let session = session.lock().await;
    let arguments = session
        .views()
        .current()
        .into_iter()
        .flat_map(|view| view.widgets)
        .filter_map(|widget| match widget {
            Widget::Choice { command: Some(command), options, .. } => {
                Some((command.trim().to_owned(), options.into_iter().map(|option| option.value).collect()))
            }
            _ => None,
        })
        .collect();
    Completions { commands, arguments }
}

/// The console prompt: `[status] > ` with the status texts the plugins give (`status`),
/// else `> `. Asked before every line, so the badge follows switches by the model, the
/// operator or a reload. A view a reload by the file watcher left stale is drawn first.
async fn prompt_with_status(host: &Host, session: &SessionHandle, sink: &dyn EventSink) -> String {
    let mut session = session.lock().await;
    host.refresh_views(&mut session, sink).await;
    let mut lines = host.plugins().status(&session).await;
    lines.extend(context_badge(session.context().in_use(), host.budget().window));
    badge(&lines)
}

/// The tokens the conversation took at its last model call and the window: `12,345/128,000
/// tokens`, `~` before an estimate (the endpoint reported none), no window when none is
/// known; nothing before the first call.
fn context_badge(in_use: Option<InUse>, window: Option<u32>) -> Option<String> {
    let in_use = in_use?;
    let about = if in_use.reported { "" } else { "~" };
    let window = window.map(|window| format!("/{}", thousands(window.into()))).unwrap_or_default();
    Some(format!("{about}{}{window} tokens", thousands(in_use.tokens)))
}

/// `[a] [b] > ` for the status texts `lines`, each on one line; `> ` without any.
fn badge(lines: &[String]) -> String {
    let badges: Vec<String> = lines.iter().map(|line| format!("[{}] ", one_line(line.trim()))).collect();
    format!("{}> ", badges.concat())
}

/// Asks the operator at the console.
pub struct ConsoleApprover {
    keyboard: Keyboard,
    /// Told when the operator pressed Ctrl-C at the prompt: the turn is to be cancelled.
    interrupt: Arc<tokio::sync::Notify>,
    /// Held while a question is up: child agents run at once and may ask together, and two
    /// questions on the screen would take each other's keys.
    one_at_a_time: Arc<Mutex<()>>,
}

impl ConsoleApprover {
    pub fn new() -> Self {
        Self::on(Keyboard::Lines(stdin_lines()))
    }

    fn on(keyboard: Keyboard) -> Self {
        Self { keyboard, interrupt: Arc::default(), one_at_a_time: Arc::default() }
    }
}

impl Default for ConsoleApprover {
    fn default() -> Self {
        Self::new()
    }
}

impl Approver for ConsoleApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            let _one_at_a_time = self.one_at_a_time.lock().await;
            // Fitted to the terminal's width at a terminal: wrapped, never cut.
            let columns = rich_on().then(width::columns);
            print!("{}", approval_question(request, colors_on(), columns));
            let choices = approval_choices(columns);
            let cancelled = || ApprovalAnswer::Deny { reason: Some("the operator cancelled".into()) };
            let mut again = false;
            loop {
                let answer = match self.keyboard.choice(&choices, again).await {
                    Read::Line(answer) => answer,
                    Read::Interrupted => {
                        println!();
                        // Only wakes a turn waiting on it, so no later turn is cancelled by it.
                        self.interrupt.notify_waiters();
                        return cancelled();
                    }
                    Read::Ended => {
                        println!();
                        return cancelled();
                    }
                };
                let Some((answer, meaning)) = approval_answer(&answer) else {
                    again = true;
                    continue;
                };
                if matches!(self.keyboard, Keyboard::Editor(_)) {
                    // The key is not echoed in raw mode: say what it chose.
                    println!("{meaning}");
                }
                let ApprovalAnswer::Deny { .. } = answer else { return answer };
                let why = match self.keyboard.answer(DENY_REASON).await {
                    Read::Line(why) if !why.trim().is_empty() => Some(why),
                    Read::Interrupted => {
                        self.interrupt.notify_waiters();
                        return cancelled();
                    }
                    _ => None,
                };
                return ApprovalAnswer::Deny { reason: why };
            }
        })
    }
}

/// Asked after a denial: what the model is told, if anything.
const DENY_REASON: &str = "  reason for the model (optional; Enter or Esc for none) > ";

/// The choices of an approval, one key each at a terminal.
const APPROVAL_CHOICES: [&str; 4] =
    ["[y] once", "[a] always this tool, for this reason", "[e] always these exact arguments", "[n] deny > "];

/// The choices as the prompt, on as many lines as `columns` needs (one off a terminal).
fn approval_choices(columns: Option<usize>) -> String {
    let mut lines: Vec<String> = Vec::new();
    for choice in APPROVAL_CHOICES {
        let fits = |line: &String| {
            columns.is_none_or(|columns| width::width(line) + 2 + width::width(choice) <= columns)
        };
        match lines.last_mut() {
            Some(line) if fits(line) => {
                line.push_str("  ");
                line.push_str(choice);
            }
            _ => lines.push(format!("  {choice}")),
        }
    }
    lines.join("\n")
}

/// The answer a key (or a typed line) gives, and what it means in words; `None` for one that
/// means nothing (asked again). A denial's reason is asked next.
fn approval_answer(typed: &str) -> Option<(ApprovalAnswer, &'static str)> {
    match typed.trim() {
        "y" | "Y" | "yes" => Some((ApprovalAnswer::AllowOnce, "y: allowed once")),
        "a" | "A" => Some((ApprovalAnswer::AllowToolAlways, "a: always allowed for this tool")),
        "e" | "E" => Some((ApprovalAnswer::AllowExactAlways, "e: always allowed with these exact arguments")),
        "n" | "N" | "no" => Some((ApprovalAnswer::Deny { reason: None }, "n: denied")),
        _ => None,
    }
}

/// The question put to the operator: the exact call, unabridged, every field escaped. It
/// starts on a fresh line after resetting the terminal's attributes (when colours are on,
/// the only time the host writes escape codes), and since everything printed before it was
/// escaped too, no earlier output can have moved the cursor to draw over it.
fn approval_question(request: &ApprovalRequest, colors: bool, columns: Option<usize>) -> String {
    let reset = if colors { "\x1b[0m" } else { "" };
    let arguments = compact_json(&request.arguments_text);
    // A child agent's call says whose it is first: the operator answers for the child.
    let agent = request.agent.as_ref().map(|agent| {
        (
            "agent:    ",
            format!("{} (a child agent, session {})", one_line(&agent.name), one_line(&agent.session_id))
                .into(),
        )
    });
    let fields = agent.into_iter().chain([
        ("tool:     ", one_line(&request.tool)),
        ("plugin:   ", one_line(&request.plugin)),
        ("arguments:", one_line(&arguments)),
        ("asked by: ", one_line(&request.asked_by)),
        ("reason:   ", one_line(&request.reason)),
    ]);
    let mut question = format!("{reset}\n── approval needed ──\n");
    for (label, value) in fields {
        let line = format!("  {label} {value}");
        // A field too wide goes on under its value's column, so nothing of it is cut.
        // The arguments are data, broken anywhere so that every character stays where it
        // was; the rest is prose, broken between words.
        let indent = 2 + label.len() + 1;
        let lines = match columns {
            Some(columns) if label.starts_with("arguments") => width::wrap(&line, columns, indent),
            Some(columns) => width::wrap_words(&line, columns, indent),
            None => vec![line],
        };
        for line in lines {
            question.push_str(&line);
            question.push('\n');
        }
    }
    question
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_badge_shows_each_status_on_one_line_and_nothing_without_one() {
        assert_eq!(badge(&[]), "> ");
        assert_eq!(badge(&["plan".to_owned()]), "[plan] > ");
        assert_eq!(badge(&["a\nb".to_owned(), " two ".to_owned()]), "[a\\nb] [two] > ");
    }

    #[test]
    fn the_context_badge_shows_the_tokens_in_use_and_the_window() {
        let reported = Some(InUse { tokens: 12_345, reported: true });
        assert_eq!(context_badge(reported, Some(128_000)).as_deref(), Some("12,345/128,000 tokens"));
        assert_eq!(context_badge(reported, None).as_deref(), Some("12,345 tokens"));
        let estimated = Some(InUse { tokens: 980, reported: false });
        assert_eq!(context_badge(estimated, Some(8_000)).as_deref(), Some("~980/8,000 tokens"));
        assert_eq!(context_badge(None, Some(8_000)), None, "before the first call");
        let lines = vec!["plan".to_owned(), context_badge(reported, Some(128_000)).unwrap()];
        assert_eq!(badge(&lines), "[plan] [12,345/128,000 tokens] > ");
    }

    #[test]
    fn show_prints_a_kept_result_whole_and_escaped() {
        let mut results = KeptResults::default();
        assert_eq!(show_command("/showing", &results), None, "another command");
        assert_eq!(show_command("hello", &results), None);
        assert_eq!(show_command("/show", &results), Some(Err("no tool result yet in this console".into())));
        results.keep("run", true, "one\ntwo \x1b[2J\n# not a heading\n");
        results.keep("read\n", false, "last");
        assert_eq!(
            show_command("/show 2", &results),
            Some(Ok(
                "── result 2: run (ok) ──\none\ntwo \\x1b[2J\n# not a heading\n── end of result 2 ──".into()
            ))
        );
        assert_eq!(
            show_command("/show", &results),
            Some(Ok("── result 1: read\\n (failed) ──\nlast\n── end of result 1 ──".into()))
        );
        assert_eq!(
            show_command("/show 3", &results),
            Some(Err("only 2 tool results are kept: /show 1 to /show 2".into()))
        );
        assert!(matches!(show_command("/show x", &results), Some(Err(usage)) if usage.starts_with("usage")));
    }

    #[test]
    fn the_approval_question_shows_the_whole_call_escaped() {
        let long = "x".repeat(500);
        let request = ApprovalRequest {
            call_id: "c1".into(),
            tool: "run\x1b[2A".into(),
            plugin: "runner".into(),
            arguments: serde_json::json!({}),
            arguments_text: format!("{{ \"command\": \"'rm' -rf ~\",\n  \"pad\": \"{long}\u{202e}\" }}"),
            reason: "asks\r".into(),
            asked_by: "gatekeeper@0.1.0".into(),
            agent: None,
        };
        let question = approval_question(&request, false, None);
        assert!(question.starts_with('\n'), "{question}");
        assert!(!question.contains('\x1b') && !question.contains('\r') && !question.contains('\u{202e}'));
        assert!(question.contains("tool:      run\\x1b[2A\n"), "{question}");
        assert!(
            question.contains(&format!(
                "arguments: {{\"command\":\"'rm' -rf ~\",\"pad\":\"{long}\\u{{202e}}\"}}\n"
            )),
            "{question}"
        );
        assert!(question.contains("reason:    asks\\r\n"), "{question}");
        assert!(approval_question(&request, true, None).starts_with("\x1b[0m\n"));
        assert!(!question.contains("agent:"), "the session's own call names no agent");
        let label = agent_host::agent::AgentLabel { name: "fixer\x07".into(), session_id: "s-1".into() };
        let child = ApprovalRequest { agent: Some(label), ..request.clone() };
        let asked = approval_question(&child, false, None);
        assert!(
            asked.contains(
                "── approval needed ──\n  agent:     fixer\\x07 (a child agent, session s-1)\n  tool:"
            ),
            "{asked}"
        );

        // At a terminal 60 columns wide, every line fits and the arguments go on whole.
        let wrapped = approval_question(&request, false, Some(60));
        assert!(wrapped.lines().all(|line| width::width(line) <= 60), "{wrapped}");
        let arguments: String = wrapped
            .lines()
            .skip_while(|line| !line.starts_with("  arguments: "))
            .take_while(|line| !line.starts_with("  asked by:"))
            .map(|line| &line["  arguments: ".len()..])
            .collect();
        assert_eq!(arguments, format!("{{\"command\":\"'rm' -rf ~\",\"pad\":\"{long}\\u{{202e}}\"}}"));
    }

    #[test]
    fn the_choices_go_on_as_many_lines_as_the_width_needs() {
        let one = approval_choices(None);
        assert_eq!(
            one,
            "  [y] once  [a] always this tool, for this reason  [e] always these exact arguments  [n] deny > "
        );
        assert_eq!(approval_choices(Some(120)), one);
        let narrow = approval_choices(Some(60));
        assert_eq!(
            narrow,
            "  [y] once  [a] always this tool, for this reason\n  [e] always these exact arguments  [n] deny > "
        );
    }
}
