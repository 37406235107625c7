use std::process::ExitCode;

use clap::Parser;

/// The binary, not the library, picks the allocator, so an embedder keeps its own. mimalloc:
/// a model round trip makes many small, short-lived allocations on whichever worker thread
/// runs the session, which glibc's allocator serves with consolidation and contention across
/// threads; mimalloc 2 rather than 3 for its resident memory over long runs (BENCHMARKS.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: agent_host_cli::allocator::MiMalloc = agent_host_cli::allocator::MiMalloc;

fn main() -> ExitCode {
    let args = agent_host_cli::Args::parse();
    agent_host_cli::main(args)
}
