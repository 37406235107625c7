//! Lines that arrive while the line editor waits at its prompt (a hot reload's notices, a log
//! line): printed above the prompt by the editor itself (reedline's external printer), which
//! then draws the prompt and the line typed so far again below them. Written straight to the
//! terminal instead, such a line lands on the prompt's row after what was typed, and in the
//! editor's raw mode each line after it starts where the last one ended: a staircase.

use std::io::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use reedline::ExternalPrinter;
use unicode_width::UnicodeWidthChar as _;

use super::width;
use agent_host::unpoisoned::LockUnpoisoned as _;

/// How many rows may wait for the editor's next look.
const WAITING_ROWS: usize = 64;
/// How often the editor looks for rows to print while it waits for keys.
pub const LOOK: Duration = Duration::from_millis(20);

/// The printer of the prompt that is up, if one is.
static UP: Mutex<Option<ExternalPrinter<String>>> = Mutex::new(None);
/// One text at a time, so two threads' lines do not interleave.
static PRINTING: Mutex<()> = Mutex::new(());

/// A printer for an editor to print with.
pub fn printer() -> ExternalPrinter<String> {
    ExternalPrinter::new(WAITING_ROWS)
}

/// While this lives, [`print`] hands lines to the editor's printer; dropped (the read is over,
/// the terminal back in its usual mode), what the editor had no time to print is written out.
pub struct PromptUp(ExternalPrinter<String>);

/// The editor's prompt is up, and `printer` prints above it.
pub fn prompt_up(printer: &ExternalPrinter<String>) -> PromptUp {
    *UP.lock_unpoisoned() = Some(printer.clone());
    PromptUp(printer.clone())
}

impl Drop for PromptUp {
    fn drop(&mut self) {
        // Under the lock, so no row is handed over after the last one written out here.
        let mut up = UP.lock_unpoisoned();
        *up = None;
        let mut out = std::io::stdout().lock();
        while let Some(row) = self.0.get_line() {
            let _ = writeln!(out, "{row}");
        }
        let _ = out.flush();
    }
}

/// Hands `text` (lines, escaped, maybe coloured) to the editor to print above its prompt, cut
/// into the terminal's rows (the editor counts one row per line it prints, and would draw its
/// prompt over the rest of a line that wrapped). False when no prompt is up: the caller
/// writes the text itself.
pub fn print(text: &str) -> bool {
    let _one_at_a_time = PRINTING.lock_unpoisoned();
    if UP.lock_unpoisoned().is_none() {
        return false;
    }
    let columns = width::columns();
    let mut pending = text.trim_end_matches('\n').split('\n').flat_map(|line| rows(line, columns));
    while let Some(row) = pending.next() {
        if let Err(row) = hand_over(row) {
            // The prompt went down meanwhile: the terminal is in its usual mode again.
            let mut out = std::io::stdout().lock();
            for row in std::iter::once(row).chain(pending) {
                let _ = writeln!(out, "{row}");
            }
            let _ = out.flush();
            break;
        }
    }
    true
}

/// Hands `row` to the editor once it has taken the last one, and gives it time to draw it;
/// gives the row back when the prompt went down meanwhile.
///
/// One row a look, because the editor (reedline 0.46) asks the terminal where its cursor is
/// before the rows it printed have left its buffer: given two rows at once, it takes the
/// prompt for lost and draws it anew at the top of a cleared screen.
fn hand_over(row: String) -> Result<(), String> {
    loop {
        {
            let up = UP.lock_unpoisoned();
            let Some(printer) = up.as_ref() else { return Err(row) };
            if printer.receiver().is_empty() {
                printer.sender().try_send(row).map_err(|refused| refused.into_inner())?;
                break;
            }
        }
        std::thread::sleep(LOOK / 4);
    }
    std::thread::sleep(LOOK * 2);
    Ok(())
}

/// Where log lines go: stderr, or above the prompt while one is up.
pub struct LogOutput;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogOutput {
    type Writer = LogLine;

    fn make_writer(&'a self) -> LogLine {
        LogLine(Vec::new())
    }
}

/// One log line, kept until it is whole, then written where it goes.
pub struct LogLine(Vec<u8>);

impl std::io::Write for LogLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        if self.0.is_empty() || print(&String::from_utf8_lossy(&self.0)) {
            return;
        }
        let _ = std::io::stderr().lock().write_all(&self.0);
    }
}

/// `line` cut into rows of at most `columns`, a colour code (`ESC [ ... m`) taking none.
fn rows(line: &str, columns: usize) -> Vec<String> {
    let mut rows = Vec::new();
    let (mut row, mut used) = (String::new(), 0);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            row.push(c);
            // The sequence up to its final byte, in `@` to `~`.
            for next in chars.by_ref() {
                row.push(next);
                if next != '[' && ('@'..='~').contains(&next) {
                    break;
                }
            }
            continue;
        }
        let w = c.width().unwrap_or(0);
        if used + w > columns && used > 0 {
            rows.push(std::mem::take(&mut row));
            used = 0;
        }
        row.push(c);
        used += w;
    }
    rows.push(row);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_cut_into_rows_its_colour_codes_taking_no_column() {
        assert_eq!(rows("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(rows("\x1b[31mabcd\x1b[0m", 4), ["\x1b[31mabcd\x1b[0m"]);
        assert_eq!(rows("\x1b[2mab\x1b[0mcdef", 4), ["\x1b[2mab\x1b[0mcd", "ef"]);
        assert_eq!(rows("日本語", 4), ["日本", "語"]);
        assert_eq!(rows("", 4), [""]);
    }

    #[test]
    fn with_a_prompt_up_lines_go_to_its_printer_one_row_a_look_and_after_it_to_the_caller() {
        assert!(!print("nobody reads"), "no prompt up: the caller writes");
        let printer = printer();
        let up = prompt_up(&printer);
        // The editor's looks: each takes what is there.
        let editor = printer.clone();
        let looks = std::thread::spawn(move || {
            let mut seen = Vec::new();
            while seen.len() < 2 {
                let look: Vec<String> = std::iter::from_fn(|| editor.get_line()).collect();
                assert!(look.len() <= 1, "one row a look: {look:?}");
                seen.extend(look);
                std::thread::sleep(LOOK);
            }
            seen
        });
        assert!(print("one\ntwo\n"));
        assert_eq!(looks.join().unwrap(), ["one", "two"]);
        drop(up);
        assert!(!print("after"));
    }
}
