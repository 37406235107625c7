//! The spinner with elapsed time drawn while the model works, on a line of its own that is
//! erased the moment anything else is written.

use std::io::Write;
use std::time::{Duration, Instant};

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// How often the spinner is redrawn.
pub const TICK: Duration = Duration::from_millis(100);
/// What the spinner line says after the frame.
pub const WORKING: &str = "working";

#[derive(Debug, Default)]
pub struct Spinner {
    /// Since when the model has been working; `None` while the spinner is off.
    since: Option<Instant>,
    frame: usize,
    /// Whether its line is on the screen now.
    drawn: bool,
    /// What it says after the time: what the running child agents do.
    status: Option<String>,
}

impl Spinner {
    /// The model is working: the spinner runs from now (its clock keeps running when it
    /// already does).
    pub fn start(&mut self) {
        self.since.get_or_insert_with(Instant::now);
    }

    /// What the line says after the time (escaped already), or nothing more.
    pub fn set_status(&mut self, status: Option<String>) {
        self.status = status;
    }

    /// Stops the spinner and erases its line.
    pub fn stop(&mut self, out: &mut impl Write) {
        self.since = None;
        self.erase(out);
    }

    /// Erases its line before something else is written there, keeping it running.
    pub fn erase(&mut self, out: &mut impl Write) {
        if self.drawn {
            let _ = write!(out, "\r\x1b[2K");
            self.drawn = false;
        }
    }

    /// Draws the next frame, when running.
    pub fn tick(&mut self, out: &mut impl Write) {
        let Some(since) = self.since else { return };
        self.frame = (self.frame + 1) % FRAMES.len();
        let mut line = format!("{} {WORKING} · {}s", FRAMES[self.frame], since.elapsed().as_secs());
        if let Some(status) = &self.status {
            line.push_str(" · ");
            line.push_str(status);
        }
        // On one row, or erasing it would leave the rest of it behind.
        let line = super::width::fit(&line, super::width::columns() - 1);
        let _ = write!(out, "\r\x1b[2K\x1b[2m{line}\x1b[0m");
        let _ = out.flush();
        self.drawn = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spinner_draws_while_running_and_erases_its_line_when_stopped() {
        let mut spinner = Spinner::default();
        let mut out = Vec::new();
        spinner.tick(&mut out);
        assert!(out.is_empty(), "off until started");
        spinner.start();
        spinner.tick(&mut out);
        let drawn = String::from_utf8(std::mem::take(&mut out)).unwrap();
        assert!(drawn.contains("⠙ working · 0s"), "{drawn:?}");
        spinner.stop(&mut out);
        assert_eq!(out, b"\r\x1b[2K");
        out.clear();
        spinner.tick(&mut out);
        spinner.stop(&mut out);
        assert!(out.is_empty(), "nothing to erase once stopped");
    }

    #[test]
    fn the_spinner_says_what_children_do_after_the_time() {
        let mut spinner = Spinner::default();
        let mut out = Vec::new();
        spinner.start();
        spinner.set_status(Some("explorer: thinking".into()));
        spinner.tick(&mut out);
        let drawn = String::from_utf8(out).unwrap();
        assert!(drawn.contains("working · 0s · explorer: thinking"), "{drawn:?}");
    }
}
