//! Renders the event stream for a person: streamed text, tool calls, a live todo
//! checklist, errors in red. Everything that came from a model, a tool or a plugin goes
//! through [`crate::sanitize`] first, so only the host's own colour codes reach the terminal.

use std::io::Write;
use std::sync::Mutex;

use serde_json::Value;

use crate::events::{Event, EventSink};
use crate::sanitize::{multi_line, one_line};

const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
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
            Event::AssistantMessage { text, tool_calls }
                if text.trim().is_empty() && tool_calls.is_empty() =>
            {
                // Otherwise the operator sees the turn end with nothing at all.
                self.line(&format!("{DIM}(the model sent an empty reply){RESET}"));
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
            Event::ToolDecision { name, decision, reason, decided_by, .. } if decision == "deny" => {
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
            Event::Plugin { kind, payload, .. } if kind == "todos-changed" => {
                self.line(&checklist(&payload.value()))
            }
            Event::Plugin { plugin, kind, payload, .. } if kind == "mode-changed" => {
                let payload = payload.value();
                let to = payload["to"].as_str().unwrap_or("?");
                self.line(&format!("{DIM}[{}] mode → {}{RESET}", one_line(plugin), one_line(to)));
            }
            Event::Error { message, .. } => self.line(&format!("{RED}error: {}{RESET}", multi_line(message))),
            Event::TurnEnded { reason, .. } if reason == "max_iterations" => {
                self.line(&format!("{YELLOW}(stopped: the turn reached agent.max_iterations){RESET}"));
            }
            Event::TurnEnded { .. } => self.line(""),
            Event::PluginBuilding { path, progress } => {
                self.line(&format!("{DIM}building plugin {}: {}{RESET}", one_line(path), one_line(progress)))
            }
            Event::PluginLoaded { plugin, cached, .. } => {
                let how = if *cached { "from cache" } else { "compiled" };
                self.line(&format!("{DIM}plugin {} loaded ({how}){RESET}", one_line(plugin)));
            }
            Event::PluginRejected { path, error } => self.line(&format!(
                "{RED}plugin at {} rejected: {}{RESET}",
                one_line(path),
                multi_line(error)
            )),
            _ => {}
        }
    }
}

/// `todos-changed` payloads: `{"items": [{"title"|"content", "done"|"status", ...}]}`.
fn checklist(payload: &Value) -> String {
    let items = payload["items"].as_array().cloned().unwrap_or_default();
    let done = items.iter().filter(|item| is_done(item)).count();
    let mut lines = vec![format!("{DIM}todos {done}/{}{RESET}", items.len())];
    for item in &items {
        let title = item["title"].as_str().or_else(|| item["content"].as_str()).unwrap_or("?");
        let title = one_line(title);
        let line = if is_done(item) {
            format!("  {GREEN}✓{RESET} {DIM}{title}{RESET}")
        } else if item["status"] == "in_progress" {
            format!("  {YELLOW}▸{RESET} {title}")
        } else {
            format!("  ○ {title}")
        };
        lines.push(line);
    }
    lines.join("\n")
}

fn is_done(item: &Value) -> bool {
    item["done"].as_bool().unwrap_or(false)
        || item["isComplete"].as_bool().unwrap_or(false)
        || item["status"] == "completed"
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
    [DIM, RED, GREEN, YELLOW, RESET].iter().fold(text.to_owned(), |text, code| text.replace(code, ""))
}
