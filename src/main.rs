//! The `rollouts-render` binary: the command line, the one place that prints diagnostics, and
//! exit codes (see [`rollouts_render::commands`]).

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::CommandFactory;
use clap::Parser;
use rollouts_render::Inputs;
use rollouts_render::cli::params;
use rollouts_render::cli::{Cli, Command, ImportArgs, RenderArgs};
use rollouts_render::commands::{self, INVALID_INPUT, USAGE_OR_IO};
use rollouts_render::diag::Diagnostics;
use rollouts_render::input::source::{self, ReadError};
use rollouts_render::{Format, emit, schema};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Render(args) => run(&args, true),
        Command::Validate(args) => run(&args, false),
        Command::Generate(args) => generate(&args.path),
        Command::Discover(args) => {
            let found: String = commands::discover(&args.path)
                .iter()
                .map(|path| format!("{}\n", path.display()))
                .collect();
            write_stdout(found.as_bytes())
        }
        Command::PluginYaml => write_stdout(params::plugin_yaml_text().as_bytes()),
        Command::Schema => write_stdout(schema::json_schema_text().as_bytes()),
        Command::Crd => write_stdout(emit::yaml(&schema::crd()).as_bytes()),
        Command::Import(args) => import(&args),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "rollouts-render", &mut out);
            write_stdout(&out)
        }
        Command::Man => {
            let mut out = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut out) {
                Ok(()) => write_stdout(&out),
                Err(error) => usage_error(&error.to_string()),
            }
        }
    }
}

/// Argo CD runs this in the application directory with stdin closed; stderr goes to the UI
/// and the Application status: plain, short, and never the content of Secrets.
fn generate(dir: &Path) -> ExitCode {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let read_options = source::ReadOptions::default();
    // Plain text for Argo CD, whatever the terminal.
    let mut inputs = match read_inputs(&[dir.to_path_buf()], &read_options, false) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    // Name the directory as Argo CD users know it: its path in the repository.
    if let Some(path) = env.get("ARGOCD_APP_SOURCE_PATH").filter(|p| !p.is_empty()) {
        inputs.names = vec![format!("the application directory `{path}`")];
    }
    let outcome = commands::generate(&inputs, &env);
    eprint!("{}", commands::cmp_stderr(&outcome.diagnostics));
    finish(&outcome)
}

fn run(args: &RenderArgs, write_output: bool) -> ExitCode {
    let options = match args.options() {
        Ok(options) => options,
        Err(message) => return usage_error(&message),
    };
    let inputs = match read_inputs(&args.paths, &args.read_options(), use_colour()) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    let outcome = commands::run(&inputs, &options, write_output);
    print_diagnostics(&outcome.diagnostics);
    finish(&outcome)
}

/// Writes the output of a successful run; a closed pipe (`| head`) ends the program quietly.
fn finish(outcome: &commands::Outcome) -> ExitCode {
    if outcome.status != commands::SUCCESS {
        return ExitCode::from(outcome.status);
    }
    write_stdout_with(|out| outcome.write_output(out))
}

/// Reads the inputs; on failure reports it (an I/O error is a usage error, invalid bytes are
/// invalid input) and gives the exit code.
fn read_inputs(
    paths: &[std::path::PathBuf],
    options: &source::ReadOptions,
    colour: bool,
) -> Result<Inputs, ExitCode> {
    source::read(paths, options).map_err(|error| match error {
        ReadError::Io { path, source } => usage_error(&format!("{path}: {source}")),
        ReadError::Invalid(diagnostic) => {
            eprintln!("{}", diagnostic.render(colour));
            ExitCode::from(INVALID_INPUT)
        }
    })
}

fn import(args: &ImportArgs) -> ExitCode {
    let read_options = source::ReadOptions {
        recursive: args.recursive,
        ..source::ReadOptions::default()
    };
    let inputs = match read_inputs(&args.paths, &read_options, use_colour()) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    match rollouts_render::import::import(&inputs, &args.name) {
        Ok(imported) => {
            print_diagnostics(&imported.warnings);
            write_stdout(emit::stream(&imported.documents, Format::Yaml).as_bytes())
        }
        Err(diagnostics) => {
            print_diagnostics(&diagnostics);
            ExitCode::from(INVALID_INPUT)
        }
    }
}

/// Colour only for a person at a terminal who has not asked for none (https://no-color.org).
fn use_colour() -> bool {
    io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn print_diagnostics(diagnostics: &Diagnostics) {
    let colour = use_colour();
    let mut stderr = io::stderr().lock();
    for diagnostic in diagnostics.iter() {
        let _ = writeln!(stderr, "{}", diagnostic.render(colour));
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(USAGE_OR_IO)
}

fn write_stdout(bytes: &[u8]) -> ExitCode {
    write_stdout_with(|out| out.write_all(bytes))
}

/// Writes to a buffered stdout; a closed pipe (`| head`) ends the program quietly.
fn write_stdout_with(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> ExitCode {
    let mut stdout = io::BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    match write(&mut stdout).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => usage_error(&format!("writing output: {error}")),
    }
}
