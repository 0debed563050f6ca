//! Reading inputs: files, directories and standard input, under a size cap.
//!
//! The only module that touches the file system for input. Directories contribute their
//! `.yaml`, `.yml` and `.json` files in sorted path order, hidden entries skipped; everything
//! is read before anything is parsed, so output can be all-or-nothing.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Diagnostic, Location, Pos};

/// The name diagnostics use for standard input.
pub const STDIN_NAME: &str = "<stdin>";

/// Default `--max-input-bytes`: 16 MiB, over Argo CD's own 10 MB default for a directory's
/// manifests, and small enough that text and trees fit the sidecar's memory limit (README,
/// "Reading YAML").
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// One input, read whole.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: Arc<str>,
    pub text: String,
}

impl Source {
    pub fn new(name: &str, text: impl Into<String>) -> Self {
        Self {
            name: Arc::from(name),
            text: text.into(),
        }
    }
}

/// Everything one run reads: the sources, and the inputs as the user named them (a directory
/// may hold no manifest at all, and messages about the whole input should still name it).
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub sources: Vec<Source>,
    pub names: Vec<String>,
    /// Warnings about directory entries named like manifests that were not read.
    pub skipped: Vec<Diagnostic>,
}

impl From<Vec<Source>> for Inputs {
    fn from(sources: Vec<Source>) -> Self {
        let names = sources.iter().map(|s| s.name.to_string()).collect();
        Self {
            sources,
            names,
            skipped: Vec::new(),
        }
    }
}

/// Why inputs could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The operating system refused (missing file, permissions…): exit status 2.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    /// The bytes are not acceptable input (too large, not UTF-8): exit status 1.
    #[error("{0}")]
    Invalid(Diagnostic),
}

/// What to read and how.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    pub recursive: bool,
    pub max_bytes: u64,
    /// The limit cannot be raised (`generate`: the sidecar's memory is sized for it), so the
    /// message does not offer `--max-input-bytes`.
    pub fixed_limit: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            recursive: false,
            max_bytes: DEFAULT_MAX_INPUT_BYTES,
            fixed_limit: false,
        }
    }
}

/// Reads every path (`-` is standard input; no paths at all is standard input too).
pub fn read(paths: &[PathBuf], options: &ReadOptions) -> Result<Inputs, ReadError> {
    let mut budget = Budget {
        left: options.max_bytes,
        fixed: options.fixed_limit,
    };
    let mut sources = Vec::new();
    if paths.is_empty() {
        sources.push(read_stdin(&mut budget)?);
        return Ok(Inputs::from(sources));
    }
    let mut names = Vec::new();
    let mut skipped = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            sources.push(read_stdin(&mut budget)?);
            names.push(STDIN_NAME.to_owned());
            continue;
        }
        names.push(path.display().to_string());
        let metadata = fs::metadata(path).map_err(|source| io_error(path, source))?;
        if metadata.is_dir() {
            let (files, skipped_here) = directory_entries(path, options.recursive)?;
            skipped.extend(skipped_here);
            for file in files {
                sources.push(read_file(&file, &mut budget)?);
            }
        } else {
            sources.push(read_file(path, &mut budget)?);
        }
    }
    Ok(Inputs {
        sources,
        names,
        skipped,
    })
}

/// The manifest files of a directory, sorted by path.
pub fn directory_files(dir: &Path, recursive: bool) -> Result<Vec<PathBuf>, ReadError> {
    directory_entries(dir, recursive).map(|(files, _)| files)
}

/// The manifest files of a directory, sorted by path: only regular files (or links to them)
/// named `*.yaml`, `*.yml` or `*.json`, so that nothing else is ever opened (a FIFO would
/// block the read forever). Special files named like manifests are skipped with a warning;
/// other entries are not looked at at all.
fn directory_entries(
    dir: &Path,
    recursive: bool,
) -> Result<(Vec<PathBuf>, Vec<Diagnostic>), ReadError> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = fs::read_dir(&dir).map_err(|source| io_error(&dir, source))?;
        for entry in entries {
            let entry = entry.map_err(|source| io_error(&dir, source))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let is_manifest = [".yaml", ".yml", ".json"]
                .iter()
                .any(|ext| name.ends_with(ext));
            let mut file_type = entry
                .file_type()
                .map_err(|source| io_error(&path, source))?;
            if file_type.is_symlink() {
                match fs::metadata(&path) {
                    Ok(target) => file_type = target.file_type(),
                    // A manifest that cannot be read is an error (skipping it could drop
                    // a RolloutManager, and Argo CD would prune what it installed); anything
                    // else is not ours to look at.
                    Err(error) if is_manifest => return Err(io_error(&path, error)),
                    Err(_) => continue,
                }
            }
            if file_type.is_dir() {
                if recursive {
                    pending.push(path);
                }
            } else if is_manifest && file_type.is_file() {
                files.push(path);
            } else if is_manifest {
                skipped.push(skip(
                    &path,
                    "not a regular file (a FIFO, socket or device), which could block the read",
                    "name it on the command line to read it anyway",
                ));
            }
        }
    }
    files.sort();
    skipped.sort_by(|a, b| a.message.cmp(&b.message));
    Ok((files, skipped))
}

fn skip(path: &Path, why: &str, hint: &str) -> Diagnostic {
    let name = path.strip_prefix(".").unwrap_or(path).display().to_string();
    Diagnostic::warning(format!("{name}: not read: {why}")).hint(hint)
}

fn io_error(path: &Path, source: io::Error) -> ReadError {
    ReadError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What is left of `--max-input-bytes`, and whether the limit could be raised.
struct Budget {
    left: u64,
    fixed: bool,
}

fn read_file(path: &Path, budget: &mut Budget) -> Result<Source, ReadError> {
    // Files of the directory `.` are named as users write them: `rm.yaml`, not `./rm.yaml`.
    let name = path.strip_prefix(".").unwrap_or(path).display().to_string();
    let file = fs::File::open(path).map_err(|source| io_error(path, source))?;
    let bytes = read_capped(file, &name, budget)?;
    from_bytes(&name, bytes)
}

fn read_stdin(budget: &mut Budget) -> Result<Source, ReadError> {
    let bytes = read_capped(io::stdin().lock(), STDIN_NAME, budget)?;
    from_bytes(STDIN_NAME, bytes)
}

/// Reads at most the remaining budget; one byte more means the input is too large.
fn read_capped(reader: impl Read, name: &str, budget: &mut Budget) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    reader
        .take(budget.left.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io {
            path: name.to_owned(),
            source,
        })?;
    let len = bytes.len() as u64;
    if len > budget.left {
        let error = if budget.fixed {
            Diagnostic::error(format!(
                "the application's manifests are larger than the plugin's limit of {} MiB, which keeps the sidecar within its memory",
                DEFAULT_MAX_INPUT_BYTES >> 20
            ))
            .hint("split the application into smaller ones")
        } else {
            Diagnostic::error("the input is larger than the limit of --max-input-bytes")
                .hint("split the input, or raise the limit with `--max-input-bytes`")
        };
        return Err(ReadError::Invalid(error.at(Location {
            source: Arc::from(name),
            pos: None,
        })));
    }
    budget.left -= len;
    Ok(bytes)
}

/// A source from raw bytes. Input must be UTF-8, as Kubernetes requires; the error points at
/// the first bad byte.
pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<Source, ReadError> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Source::new(name, text)),
        Err(error) => {
            let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
            let valid = std::str::from_utf8(valid).unwrap_or_default();
            let line = valid.matches('\n').count() + 1;
            let col = valid.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            Err(ReadError::Invalid(
                Diagnostic::error("the input is not valid UTF-8")
                    .at(Location {
                        source: Arc::from(name),
                        pos: Some(Pos {
                            line: u32::try_from(line).unwrap_or(u32::MAX),
                            col: u32::try_from(col).unwrap_or(u32::MAX),
                        }),
                    })
                    .hint("save the file as UTF-8"),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_located() {
        let Err(ReadError::Invalid(diagnostic)) = from_bytes("f.yaml", b"a: 1\nb: \xff\n".to_vec())
        else {
            panic!("expected an invalid-input error");
        };
        assert_eq!(
            diagnostic.to_string(),
            "f.yaml:2:4: error: the input is not valid UTF-8\n  hint: save the file as UTF-8"
        );
    }

    #[test]
    fn inputs_over_the_cap_are_refused() {
        let mut budget = Budget {
            left: 4,
            fixed: false,
        };
        assert!(read_capped(&b"12345"[..], "x", &mut budget).is_err());
        let mut budget = Budget {
            left: 5,
            fixed: false,
        };
        assert_eq!(
            read_capped(&b"12345"[..], "x", &mut budget).unwrap().len(),
            5
        );
        assert_eq!(budget.left, 0);
    }
}
