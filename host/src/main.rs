use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = agent_host::cli::Args::parse();
    agent_host::cli::main(args)
}
