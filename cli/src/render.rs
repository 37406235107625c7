//! Renders the event stream for a person: streamed text, tool calls, plugins' own display
//! forms of their events, errors in red. Everything that came from a model, a tool or a
//! plugin goes through [`agent_host::sanitize`] first, so only the host's own colour codes reach
//! the terminal.

use std::io::Write;
use std::sync::{Arc, Mutex, Weak};

use super::child_cards::{self, ChildCards};
use super::diff_lines::{self, DiffLine};
use super::markdown::Markdown;
use super::spinner::{self, Spinner};
use super::tool_cards;
use super::view_lines::{Colors, changed_lines};
use super::width;
use agent_host::events::PluginView;
use agent_host::events::{CallDecision, Event, EventSink, ReplyStop, ReviewOutcome, TurnEnd};
use agent_host::sanitize::{multi_line, one_line};
use agent_host::unpoisoned::LockUnpoisoned as _;

const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
/// Lines of a file's diff drawn under its tool's card; the rest is counted.
const DIFF_LINES_SHOWN: usize = 40;

/// Whether the console writes colours: only on a terminal, and never with `NO_COLOR` set
/// (no-color.org).
pub fn colors_on() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Whether replies are rendered for a person (markdown, spinner, tool cards): with colours
/// on and a terminal that is not `dumb`.
pub fn rich_on() -> bool {
    colors_on() && std::env::var("TERM").map_or(true, |term| term != "dumb")
}

/// What is on the screen now, shared by the events and the spinner's clock.
#[derive(Default)]
struct Screen {
    /// The cursor sits mid-line (plain output of a reply's deltas).
    mid_line: bool,
    /// The reply being rendered (rich output).
    markdown: Markdown,
    /// The reply's unfinished line is on the screen, plain, the cursor after it.
    partial_drawn: bool,
    spinner: Spinner,
    /// Approval questions up now (a child agent's may be asked while others run): lines
    /// wait in `held` meanwhile, since the key is read in raw mode, where a line written
    /// would land mid-question and staircase.
    asking: usize,
    held: Vec<String>,
}

impl Screen {
    /// Erases the unfinished line drawn, for what replaces it.
    fn erase_partial(&mut self, out: &mut impl Write) {
        if std::mem::take(&mut self.partial_drawn) {
            let _ = write!(out, "\r\x1b[2K");
        }
    }
}

/// Text output for the console.
pub struct ConsoleRenderer {
    screen: Arc<Mutex<Screen>>,
    /// Each plugin's view as last drawn, so a change draws only what changed.
    views: Mutex<std::collections::HashMap<String, PluginView>>,
    /// Colours only on a terminal, and never with `NO_COLOR` set (no-color.org).
    color: bool,
    /// Markdown, spinner and tool cards (see [`rich_on`]); plain lines otherwise.
    rich: bool,
    /// A plugin ended the running turn with its own reason (`turn_stopped`), which it has
    /// said: the turn's end then names no cap of `[agent]`.
    judged: std::sync::atomic::AtomicBool,
    /// The child agents drawn as cards, and what the running ones do.
    children: Mutex<ChildCards>,
}

impl ConsoleRenderer {
    pub fn new() -> Self {
        let renderer = Self {
            screen: Arc::default(),
            views: Mutex::default(),
            color: colors_on(),
            rich: rich_on(),
            judged: Default::default(),
            children: Mutex::default(),
        };
        if renderer.rich {
            spin(Arc::downgrade(&renderer.screen));
        }
        renderer
    }

    fn screen(&self) -> std::sync::MutexGuard<'_, Screen> {
        self.screen.lock_unpoisoned()
    }

    fn line(&self, text: &str) {
        let text = if self.color { text.to_owned() } else { strip_colors(text) };
        let text = text.as_str();
        {
            let mut screen = self.screen();
            if screen.asking > 0 {
                screen.held.push(text.to_owned());
                return;
            }
        }
        // At the prompt (a reload's notice while a line is typed), the editor prints it.
        if super::above_prompt::print(text) {
            return;
        }
        let mut screen = self.screen();
        let mut out = std::io::stdout().lock();
        screen.spinner.erase(&mut out);
        screen.erase_partial(&mut out);
        for pending in screen.markdown.finish() {
            let _ = writeln!(out, "{pending}");
        }
        if screen.mid_line {
            let _ = writeln!(out);
            screen.mid_line = false;
        }
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    /// A piece of the reply: at a terminal each line rendered once complete, the line still
    /// streaming shown plain until then (on one row, so that erasing the row erases it);
    /// written as it comes elsewhere.
    fn delta(&self, text: &str) {
        let mut screen = self.screen();
        let mut out = std::io::stdout().lock();
        if self.rich {
            screen.spinner.stop(&mut out);
            let lines = screen.markdown.push(&multi_line(text));
            screen.erase_partial(&mut out);
            for line in lines {
                let _ = writeln!(out, "{line}");
            }
            let partial = screen.markdown.partial();
            if !partial.is_empty() {
                let _ = write!(out, "{}", width::tail(partial, width::columns() - 1));
                screen.partial_drawn = true;
            }
        } else {
            let _ = write!(out, "{}", multi_line(text));
            screen.mid_line = !text.ends_with('\n');
        }
        let _ = out.flush();
    }

    /// The model is working (rich output only): the spinner runs until something is written.
    fn working(&self) {
        if self.rich {
            self.screen().spinner.start();
        }
    }

    fn idle(&self) {
        let mut screen = self.screen();
        screen.spinner.stop(&mut std::io::stdout().lock());
    }

    /// An approval question goes up (`true`) or is answered: while one is up the spinner is
    /// off its line and lines wait; once none is, they are written.
    fn asking(&self, up: bool) {
        let held = {
            let mut screen = self.screen();
            if up {
                screen.asking += 1;
                screen.spinner.erase(&mut std::io::stdout().lock());
                return;
            }
            screen.asking = screen.asking.saturating_sub(1);
            if screen.asking > 0 {
                return;
            }
            std::mem::take(&mut screen.held)
        };
        for line in held {
            self.line(&line);
        }
    }

    /// A child agent's start, one of its events, or its end: its card's lines, and what the
    /// running children do on the spinner's line.
    fn child(&self, event: &Event) {
        let columns = if self.rich { width::columns() } else { usize::MAX / 2 };
        let colors = Colors { dim: DIM, warn: YELLOW, reset: RESET, markdown: self.rich };
        let (lines, status, running) = {
            let mut children = self.children.lock_unpoisoned();
            let lines = children.lines(event, columns, &colors);
            (lines, children.status(), children.any_running())
        };
        for line in lines {
            self.line(&line);
        }
        let mut screen = self.screen();
        screen.spinner.set_status(status);
        if self.rich && running {
            screen.spinner.start();
        }
    }

    /// The turn is over: no child of it runs, and no question of it is up any longer (one
    /// cut short by a cancel is never answered).
    fn turn_over(&self) {
        self.children.lock_unpoisoned().clear();
        self.screen().spinner.set_status(None);
        {
            let mut screen = self.screen();
            if screen.asking == 0 {
                return;
            }
            screen.asking = 1;
        }
        self.asking(false);
    }
}

/// The spinner's clock: draws a frame every tick while the renderer lives.
fn spin(screen: Weak<Mutex<Screen>>) {
    let _ = std::thread::Builder::new().name("spinner".into()).spawn(move || {
        while let Some(screen) = screen.upgrade() {
            {
                let mut screen = screen.lock_unpoisoned();
                if screen.markdown.is_empty() && !screen.mid_line && screen.asking == 0 {
                    screen.spinner.tick(&mut std::io::stdout().lock());
                }
            }
            drop(screen);
            std::thread::sleep(spinner::TICK);
        }
    });
}

impl Default for ConsoleRenderer {
    fn default() -> Self {
        Self::new()
    }
}

impl EventSink for ConsoleRenderer {
    fn emit(&self, event: &Event) {
        // The model is done working when its reply is in, or the turn ended (cancelled, say).
        if matches!(event, Event::AssistantMessage { .. } | Event::TurnEnded { .. }) {
            self.idle();
        }
        if let Event::TurnEnded { .. } = event {
            self.turn_over();
        }
        match child_cards::unwrapped(event).2 {
            Event::ApprovalRequested { .. } => self.asking(true),
            Event::ApprovalAnswered { .. } => self.asking(false),
            _ => {}
        }
        match event {
            Event::SubagentStarted { .. } | Event::Subagent { .. } | Event::SubagentEnded { .. } => {
                self.child(event)
            }
            Event::SessionStarted { session_id, resumed } => {
                let how = if *resumed { "resumed" } else { "new" };
                let session_id = one_line(session_id);
                self.line(&format!(
                    "{DIM}session {session_id} ({how}; resume with --session {session_id}){RESET}"
                ));
            }
            Event::AssistantDelta { text } => self.delta(text),
            Event::ModelRequest { .. } => self.working(),
            Event::AssistantMessage { text, tool_calls, stop, usage, reasoning } => {
                if let Some(reasoning) = reasoning {
                    self.line(&format!("{DIM}reasoning: {}{RESET}", multi_line(reasoning.trim())));
                }
                if text.trim().is_empty() && tool_calls.is_empty() && *stop != ReplyStop::BrokenOff {
                    // Otherwise the operator sees the turn end with nothing at all.
                    self.line(&format!("{DIM}(the model sent an empty reply){RESET}"));
                }
                if let Some(warning) = stop_warning(*stop, !tool_calls.is_empty()) {
                    self.line(&format!("{YELLOW}⚠ {warning}{RESET}"));
                }
                // Dimmed after the reply: `in 1,234 (cached 1,000) · out 56`.
                if let Some(usage) = usage {
                    self.line(&format!("{DIM}{}{RESET}", usage.summary()));
                }
            }
            // Each fitted to the terminal's width now: `⏺ ` and `  ⎿ ✓ ` take 2 and 6 columns.
            Event::ToolCall { name, arguments, .. } if self.rich => {
                let card = tool_cards::call_line(name, arguments, width::columns() - 2);
                self.line(&format!("{BOLD}⏺{RESET} {card}"));
            }
            Event::ToolResult { ok, output, .. } if self.rich => {
                let (mark, color) = if *ok { ("✓", DIM) } else { ("✗", YELLOW) };
                let card = tool_cards::result_line(output, width::columns() - 6);
                self.line(&format!("{color}  ⎿ {mark} {card}{RESET}"));
            }
            Event::FileEdited { edit, .. } if self.rich => {
                let columns = width::columns();
                self.line(&format!(
                    "{DIM}  ⎿ ✎ {}{RESET}",
                    width::fit(&diff_lines::summary(edit), columns - 6)
                ));
                for line in diff_lines::diff_lines(edit, DIFF_LINES_SHOWN) {
                    let fit = |text: &str| width::fit(text, columns - 8);
                    self.line(&match line {
                        DiffLine::Added(text) => format!("      {GREEN}+ {}{RESET}", fit(&text)),
                        DiffLine::Removed(text) => format!("      {RED}- {}{RESET}", fit(&text)),
                        DiffLine::Unchanged(text) => format!("      {DIM}  {}{RESET}", fit(&text)),
                        DiffLine::Gap => format!("      {DIM}  ⋯{RESET}"),
                        DiffLine::More(more) => format!("      {DIM}… {more} more lines{RESET}"),
                    });
                }
            }
            Event::FileEdited { edit, .. } => {
                self.line(&format!("{DIM}  ✎ {}{RESET}", diff_lines::summary(edit)));
            }
            Event::ToolCall { name, arguments, .. } => {
                self.line(&format!(
                    "{DIM}→ {} {}{RESET}",
                    one_line(name),
                    preview(&arguments.to_string(), 120)
                ));
            }
            Event::ToolResult { ok, output, .. } => {
                let (mark, color) = if *ok { ("✓", DIM) } else { ("✗", YELLOW) };
                self.line(&format!("{color}  {mark} {}{RESET}", preview(output, 160)));
            }
            Event::ToolDecision { name, decision: CallDecision::Deny, reason, decided_by, .. } => {
                self.line(&format!(
                    "{YELLOW}  ⛔ {} refused by {}: {}{RESET}",
                    one_line(name),
                    one_line(decided_by),
                    one_line(reason)
                ));
            }
            // Nobody was asked: the operator reads who approved in their place, and why the
            // policy would have asked them.
            Event::ToolDecision {
                name, decision: CallDecision::AllowByReview, reason, decided_by, ..
            } => {
                self.line(&format!(
                    "{DIM}  ⚖ {} approved by review of {}, in your place (the policy asks: {}){RESET}",
                    one_line(name),
                    one_line(decided_by),
                    one_line(reason)
                ));
            }
            Event::Continued { plugin, .. } => {
                self.line(&format!("{DIM}↻ {} keeps the turn going{RESET}", one_line(plugin)))
            }
            Event::TurnStopped { plugin, message, .. } => {
                self.judged.store(true, std::sync::atomic::Ordering::Relaxed);
                self.line(&format!("{YELLOW}⏹ {}: {}{RESET}", one_line(plugin), one_line(message)))
            }
            Event::ContinuationPreempted { plugin } => self.line(&format!(
                "{DIM}↻ {} would keep the turn going; your input comes first{RESET}",
                one_line(plugin)
            )),
            Event::TurnQueued { plugin, prompt } => self.line(&format!(
                "{DIM}↻ {} starts a turn: {}{RESET}",
                one_line(plugin),
                preview(prompt, 160)
            )),
            Event::ToolReviewed { name, reviewed_by, verdict, reason, .. } => {
                let verdict = match verdict {
                    // The decision that follows says it, naming who reviewed.
                    ReviewOutcome::Abstain | ReviewOutcome::Allow => return,
                    ReviewOutcome::Deny => "denied",
                    ReviewOutcome::Error => "could not review",
                };
                let reason =
                    reason.as_deref().map(|reason| format!(": {}", one_line(reason))).unwrap_or_default();
                self.line(&format!(
                    "{DIM}  ⚖ {} {verdict} {}{reason}{RESET}",
                    one_line(reviewed_by),
                    one_line(name)
                ))
            }
            Event::PromptBlocked { plugin, reason } => {
                self.line(&format!("{YELLOW}⛔ {}: {}{RESET}", one_line(plugin), one_line(reason)))
            }
            // Drawn from the widgets alone, whichever plugin sent them.
            Event::ViewChanged { view } => {
                let before = self.views.lock_unpoisoned().insert(view.plugin.clone(), view.clone());
                for line in changed_lines(
                    view,
                    before.as_ref(),
                    &Colors { dim: DIM, warn: YELLOW, reset: RESET, markdown: self.rich },
                ) {
                    self.line(&line);
                }
            }
            // The plugin's own words; the host knows no plugin's event kinds.
            Event::Plugin { display: Some(display), .. } => self.line(&multi_line(display)),
            Event::Error { message, .. } => self.line(&format!("{RED}error: {}{RESET}", multi_line(message))),
            // The plugin that ended the turn said why (`turn_stopped`).
            Event::TurnEnded { .. } if self.judged.swap(false, std::sync::atomic::Ordering::Relaxed) => {
                self.line("")
            }
            Event::TurnEnded { reason: TurnEnd::MaxIterations, .. } => {
                self.line(&format!("{YELLOW}(stopped: the turn reached agent.max_iterations){RESET}"));
            }
            Event::TurnEnded { reason: TurnEnd::TokenBudget, tokens, estimated, .. } => {
                let how = if *estimated { " (estimated: the endpoint reported no usage)" } else { "" };
                self.line(&format!(
                    "{YELLOW}(stopped: the turn spent {tokens} tokens{how}, agent.max_turn_tokens){RESET}"
                ));
            }
            Event::TurnEnded { reason: TurnEnd::TimeBudget, ms, .. } => {
                self.line(&format!(
                    "{YELLOW}(stopped: the turn ran {:.1} s, agent.max_turn_secs){RESET}",
                    *ms as f64 / 1000.0
                ));
            }
            Event::TurnEnded { reason: TurnEnd::ReplyCut, .. } => {
                self.line(&format!(
                    "{YELLOW}(stopped: the last reply is incomplete, cut at the output limit; raise [model] max_output_tokens or ask for less){RESET}"
                ));
            }
            Event::TurnEnded { reason: TurnEnd::Cancelled, .. } => {
                self.line(&format!(
                    "{YELLOW}(turn cancelled; the session keeps every step before it){RESET}"
                ));
            }
            Event::TurnEnded { .. } => self.line(""),
            Event::PluginBuilding { path, progress } => {
                self.line(&format!("{DIM}building plugin {}: {}{RESET}", one_line(path), one_line(progress)))
            }
            Event::PluginModelCall { plugin, input_tokens, output_tokens, .. } => self.line(&format!(
                "{DIM}{} asked the model ({input_tokens} tokens in, {output_tokens} out){RESET}",
                one_line(plugin)
            )),
            Event::Compacted { strategy, note, fallback, tokens_before, tokens_after, .. } => {
                let colour = if fallback.is_some() { YELLOW } else { DIM };
                self.line(&format!(
                    "{colour}⇣ context compacted by {}: {} ({tokens_before} → {tokens_after} tokens; the store keeps every message){RESET}",
                    one_line(strategy),
                    one_line(note)
                ));
            }
            Event::CompactionVetoed { plugin, reason } => self.line(&format!(
                "{DIM}compaction vetoed by {}: {}{RESET}",
                one_line(plugin),
                one_line(reason)
            )),
            Event::PluginLoaded { plugin, cached, .. } => {
                let how = if *cached { "from cache" } else { "compiled" };
                self.line(&format!("{DIM}plugin {} loaded ({how}){RESET}", one_line(plugin)));
            }
            Event::McpServerStarted { server, tools, startup_ms, tool_errors, .. } => {
                self.line(&format!(
                    "{DIM}MCP server {} ready in {startup_ms} ms: {} tools{RESET}",
                    one_line(server),
                    tools.len()
                ));
                for error in tool_errors {
                    self.line(&format!("{YELLOW}{}{RESET}", one_line(error)));
                }
            }
            Event::McpServerFailed { server, error } => self.line(&format!(
                "{RED}MCP server {} did not start, its tools are left out: {}{RESET}",
                one_line(server),
                one_line(error)
            )),
            Event::PluginRejected { path, error } => self.line(&format!(
                "{RED}plugin at {} rejected: {}{RESET}",
                one_line(path),
                multi_line(error)
            )),
            _ => {}
        }
    }
}

/// The warning line for a reply that did not end by itself, if it did not.
fn stop_warning(stop: ReplyStop, had_calls: bool) -> Option<&'static str> {
    match stop {
        ReplyStop::Length if had_calls => Some(
            "the reply was cut at the output limit: its tool calls were not run, the model is asked to retry in smaller steps",
        ),
        ReplyStop::Length => Some("the reply was cut at the output limit: its text is incomplete"),
        ReplyStop::Filtered => Some("the endpoint stopped the reply for its content"),
        ReplyStop::BrokenOff => Some("the reply broke off; what arrived is kept"),
        ReplyStop::Done | ReplyStop::ToolCalls | ReplyStop::Other => None,
    }
}

/// `text` on one line, escaped, cut after `max` characters.
fn preview(text: &str, max: usize) -> String {
    let flat: String = text.chars().map(|c| if c == '\n' { ' ' } else { c }).collect();
    let flat = one_line(&flat).into_owned();
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

/// `text` without the ANSI colour codes this renderer uses.
fn strip_colors(text: &str) -> String {
    [DIM, RED, YELLOW, RESET, BOLD].iter().fold(text.to_owned(), |text, code| text.replace(code, ""))
}
