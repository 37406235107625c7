//! The console as a person meets it, for the tests: the real binary on a real pseudo-terminal
//! that is its controlling terminal, its screen read back with a terminal emulator (vt100),
//! keys typed, screens waited for, and every screen a test waited for kept under
//! `target/console-screens/` so a failure shows it.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::pty::{pseudo_terminal, resize};
use super::repo_root;

const ROWS: u16 = 40;
const COLUMNS: u16 = 120;
/// How long a screen may take to show what a test waits for: generous, never asserted on.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// The binary on a pseudo-terminal that is its controlling terminal, stdin, stdout and stderr
/// (where the line editor draws), as in a terminal window.
pub struct Console {
    keyboard: File,
    screen: Arc<Mutex<vt100::Parser>>,
    /// Every byte the console wrote, as written: what a real terminal would have obeyed.
    written: Arc<Mutex<Vec<u8>>>,
    pub child: Child,
    /// The test's name, for the screens it keeps.
    name: String,
}

impl Console {
    pub fn start(name: &str, config: &Path, args: &[&str]) -> Self {
        Self::start_sized(name, config, args, COLUMNS)
    }

    /// The console on a terminal `columns` wide.
    pub fn start_sized(name: &str, config: &Path, args: &[&str], columns: u16) -> Self {
        let (controller, terminal) = pseudo_terminal(ROWS, columns);
        let mut command = Command::new(env!("CARGO_BIN_EXE_agent-host"));
        command
            .arg("--config")
            .arg(config)
            .args(args)
            .env("TERM", "xterm-256color")
            .env_remove("NO_COLOR")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .stdin(Stdio::from(terminal.try_clone().unwrap()))
            .stdout(Stdio::from(terminal.try_clone().unwrap()))
            .stderr(Stdio::from(terminal));
        become_session_leader(&mut command);
        let child = command.spawn().unwrap();
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            ROWS.try_into().unwrap(),
            columns.try_into().unwrap(),
            0,
        )));
        let keyboard = controller.try_clone().unwrap();
        let written = Arc::new(Mutex::new(Vec::new()));
        let (shared, bytes) = (screen.clone(), written.clone());
        std::thread::spawn(move || read_screen(controller, &shared, &bytes));
        Self { keyboard, screen, written, child, name: name.to_owned() }
    }

    pub fn keys(&mut self, keys: &str) {
        self.keyboard.write_all(keys.as_bytes()).unwrap();
        self.keyboard.flush().unwrap();
    }

    /// Every byte written to the terminal so far.
    pub fn written(&self) -> Vec<u8> {
        self.written.lock().unwrap().clone()
    }

    pub fn contents(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// The screen's rows as drawn, a row a line wrapped onto being a row of its own.
    pub fn rows(&self) -> Vec<String> {
        let parser = self.screen.lock().unwrap();
        let (_, columns) = parser.screen().size();
        parser.screen().rows(0, columns.get()).collect()
    }

    /// The window resized to `columns`: the terminal and the emulator reading it.
    pub fn resize(&self, columns: u16) {
        self.screen.lock().unwrap().set_size(ROWS.try_into().unwrap(), columns.try_into().unwrap());
        resize(&self.keyboard, ROWS, columns);
    }

    /// Waits until the screen shows what `shown` accepts; keeps the screen as `NAME-step.txt`.
    pub fn wait_until(&self, step: &str, shown: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let contents = self.contents();
            if shown(&contents) {
                keep(&self.name, step, &contents);
                return contents;
            }
            if start.elapsed() > PATIENCE {
                keep(&self.name, step, &contents);
                panic!("the screen never showed `{step}`:\n{contents}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the prompt, empty, at the bottom of the screen (keys typed before it would
    /// be echoed by the terminal rather than read by the editor).
    pub fn wait_for_prompt(&self, step: &str) -> String {
        self.wait_until(step, |screen| screen.trim_end().ends_with('>'))
    }

    /// Types `text` at the prompt, again (after clearing the line) while the line does not
    /// show it: keys typed before the editor reads are not its to keep.
    pub fn type_until_shown(&mut self, text: &str) {
        let start = Instant::now();
        loop {
            self.keys(text);
            let typed = Instant::now();
            while typed.elapsed() < Duration::from_secs(3) {
                if prompt_line(&self.contents()).ends_with(text) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            assert!(start.elapsed() < PATIENCE, "the line never showed `{text}`:\n{}", self.contents());
            self.keys("\x15");
        }
    }

    pub fn wait_for(&self, step: &str, text: &str) -> String {
        self.wait_until(step, |screen| screen.contains(text))
    }

    /// Ctrl-D at the prompt, and the exit status.
    pub fn leave(mut self) -> std::process::ExitStatus {
        self.keys("\x04");
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < PATIENCE, "the console did not leave:\n{}", self.contents());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The bold cell where `text` starts on the screen.
    pub fn bold_at(&self, text: &str) -> bool {
        let parser = self.screen.lock().unwrap();
        let screen = parser.screen();
        let rows: Vec<String> = screen.rows(0, COLUMNS).collect();
        let (row, line) =
            rows.iter().enumerate().find(|(_, line)| line.contains(text)).expect("the text is shown");
        let column = line[..line.find(text).unwrap()].chars().count();
        screen.cell(row as u16, column as u16).is_some_and(vt100::Cell::bold)
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Feeds what the console writes to the emulator (and keeps it in `written`), answering the
/// cursor position queries a terminal answers.
fn read_screen(mut controller: File, screen: &Mutex<vt100::Parser>, written: &Mutex<Vec<u8>>) {
    let mut answers = controller.try_clone().unwrap();
    let mut buffer = [0u8; 4096];
    while let Ok(read @ 1..) = controller.read(&mut buffer) {
        let chunk = &buffer[..read];
        written.lock().unwrap().extend_from_slice(chunk);
        let mut parser = screen.lock().unwrap();
        parser.process(chunk);
        if chunk.windows(4).any(|w| w == b"\x1b[6n") {
            let (row, column) = parser.screen().cursor_position();
            let _ = write!(answers, "\x1b[{};{}R", row + 1, column + 1);
        }
        if chunk.windows(3).any(|w| w == b"\x1b[c") {
            let _ = answers.write_all(b"\x1b[?62c");
        }
    }
}

fn keep(test: &str, step: &str, contents: &str) {
    let folder = repo_root().join("target").join("console-screens");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join(format!("{test}-{step}.txt")), contents).unwrap();
}

/// The child starts a session of its own with the pseudo-terminal (its stdin) as controlling
/// terminal, as a login shell's child would: Ctrl-C there is SIGINT to it.
#[allow(unsafe_code)]
fn become_session_leader(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The line the prompt is on: the last one that starts with `> ` or a badge.
pub fn prompt_line(screen: &str) -> &str {
    screen.lines().rev().map(str::trim_end).find(|line| line.contains('>')).unwrap_or("")
}

/// The session id the console announced.
pub fn session_id(screen: &str) -> String {
    let after = screen.split("session ").nth(1).expect("the session line");
    after.split_whitespace().next().unwrap().to_owned()
}
