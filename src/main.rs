//! The `rollouts-render` binary: parses the command line and runs the subcommand (see
//! [`rollouts_render::commands`] for what each one does, and its exit codes).

use std::process::ExitCode;

use clap::Parser;
use rollouts_render::cli::Cli;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    rollouts_render::commands::main(Cli::parse_from(rollouts_render::cli::arguments(
        std::env::args_os(),
    )))
}
