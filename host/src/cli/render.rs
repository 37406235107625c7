//! Renders the event stream for a person: streamed text, tool calls, plugins' own display
//! forms of their events, errors in red. Everything that came from a model, a tool or a
//! plugin goes through [`crate::sanitize`] first, so only the host's own colour codes reach
//! the terminal.

use std::io::Write;
use std::sync::Mutex;

use super::view_lines::{Colors, view_lines};
use crate::events::{CallDecision, Event, EventSink, ReplyStop, TurnEnd};
use crate::sanitize::{multi_line, one_line};

const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";

/// Whether the console writes colours: only on a terminal, and never with `NO_COLOR` set
/// (no-color.org).
pub fn colors_on() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Text output for the console; remembers whether the cursor sits mid-line.
pub struct ConsoleRenderer {
    mid_line: Mutex<bool>,
    /// Colours only on a terminal, and never with `NO_COLOR` set (no-color.org).
    color: bool,
}

impl ConsoleRenderer {
    pub fn new() -> Self {
        Self { mid_line: Mutex::new(false), color: colors_on() }
    }

    fn line(&self, text: &str) {
        let text = if self.color { text.to_owned() } else { strip_colors(text) };
        let text = text.as_str();
        let mut mid_line = self.mid_line.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = std::io::stdout().lock();
        if *mid_line {
            let _ = writeln!(out);
            *mid_line = false;
        }
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
}

impl Default for ConsoleRenderer {
    fn default() -> Self {
        Self::new()
    }
}

impl EventSink for ConsoleRenderer {
    fn emit(&self, event: &Event) {
        match event {
            Event::SessionStarted { session_id, resumed } => {
                let how = if *resumed { "resumed" } else { "new" };
                let session_id = one_line(session_id);
                self.line(&format!(
                    "{DIM}session {session_id} ({how}; resume with --session {session_id}){RESET}"
                ));
            }
            Event::AssistantDelta { text } => {
                let mut mid_line = self.mid_line.lock().unwrap_or_else(|p| p.into_inner());
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "{}", multi_line(text));
                let _ = out.flush();
                *mid_line = !text.ends_with('\n');
            }
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
            Event::Continued { plugin, .. } => {
                self.line(&format!("{DIM}↻ {} keeps the turn going{RESET}", one_line(plugin)))
            }
            Event::PromptBlocked { plugin, reason } => {
                self.line(&format!("{YELLOW}⛔ {}: {}{RESET}", one_line(plugin), one_line(reason)))
            }
            // Drawn from the widgets alone, whichever plugin sent them.
            Event::ViewChanged { view } => {
                for line in view_lines(view, &Colors { dim: DIM, warn: YELLOW, reset: RESET }) {
                    self.line(&line);
                }
            }
            // The plugin's own words; the host knows no plugin's event kinds.
            Event::Plugin { display: Some(display), .. } => self.line(&multi_line(display)),
            Event::Error { message, .. } => self.line(&format!("{RED}error: {}{RESET}", multi_line(message))),
            Event::TurnEnded { reason: TurnEnd::MaxIterations, .. } => {
                self.line(&format!("{YELLOW}(stopped: the turn reached agent.max_iterations){RESET}"));
            }
            Event::TurnEnded { reason: TurnEnd::ReplyCut, .. } => {
                self.line(&format!(
                    "{YELLOW}(stopped: the last reply is incomplete, cut at the output limit; raise [model] max_output_tokens or ask for less){RESET}"
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
    [DIM, RED, YELLOW, RESET].iter().fold(text.to_owned(), |text, code| text.replace(code, ""))
}
