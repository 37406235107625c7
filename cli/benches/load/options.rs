//! The load bench's command line: what to run and how much of it.

use std::path::PathBuf;

use crate::endpoint::Wire;

/// What one run of the bench does.
pub struct Options {
    pub serial: usize,
    pub sessions: usize,
    pub concurrency: usize,
    /// Time `agent-host --check` cold and warm (`--no-startup` skips it: quicker A/B runs).
    pub startup: bool,
    /// The client under test: `--provider openai` (the default) or `--provider anthropic`.
    pub wire: Wire,
    /// `--long-session N`: only the long session, until its history holds N messages.
    pub long_session: Option<usize>,
    /// `--serve`: the workflow through `agent-host serve` beside the library path.
    pub serve: bool,
    /// `--store postgres`: sessions in a PostgreSQL database rather than a SQLite file.
    pub postgres: bool,
    /// `--hosts N`: with `--serve --store postgres`, N hosts on that one database.
    pub hosts: usize,
    /// `--prebuilt`: the stock plugins as the last build left them, not built now. For runs
    /// under valgrind, which cannot install the build sandbox's seccomp filter.
    pub prebuilt: bool,
    /// `--compile-cache DIR`: the compiled plugins kept in DIR from run to run rather than
    /// in the run's own folder. Under valgrind a run's compiling is most of its instructions,
    /// and not quite the same from run to run; taken from DIR, it adds nothing.
    pub compile_cache: Option<PathBuf>,
}

impl Options {
    /// `--serial N`, `--sessions N`, `--concurrency C`, `--no-startup`, `--provider P`,
    /// `--long-session N`, `--compile-cache DIR`; cargo's own `--bench` is ignored.
    pub fn parse() -> Self {
        let mut options = Options {
            serial: 1_000,
            sessions: 5_000,
            concurrency: 50,
            startup: true,
            wire: Wire::ChatCompletions,
            long_session: None,
            serve: false,
            postgres: false,
            hosts: 1,
            prebuilt: false,
            compile_cache: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = || -> usize {
                args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{arg} needs a number"))
            };
            match arg.as_str() {
                "--serial" => options.serial = value(),
                "--sessions" => options.sessions = value(),
                "--concurrency" => options.concurrency = value().max(1),
                "--no-startup" => options.startup = false,
                "--prebuilt" => options.prebuilt = true,
                "--compile-cache" => {
                    let dir = args.next().unwrap_or_else(|| panic!("--compile-cache needs a folder"));
                    options.compile_cache =
                        Some(std::path::absolute(dir).expect("the working folder is readable"));
                }
                "--long-session" => options.long_session = Some(value().max(1)),
                "--serve" => options.serve = true,
                "--hosts" => options.hosts = value().max(1),
                "--store" => {
                    options.postgres = match args.next().as_deref() {
                        Some("sqlite") => false,
                        Some("postgres") => true,
                        other => panic!("--store takes sqlite or postgres, not {other:?}"),
                    }
                }
                "--provider" => {
                    options.wire = match args.next().as_deref() {
                        Some("openai") => Wire::ChatCompletions,
                        Some("anthropic") => Wire::Messages,
                        other => panic!("--provider takes openai or anthropic, not {other:?}"),
                    }
                }
                _ => {}
            }
        }
        options
    }
}
