//! rollouts-render: renders Argo Rollouts `RolloutManager` resources into the plain
//! Kubernetes manifests that install and configure the Argo Rollouts controller.
//!
//! The stages, one module each: `input` reads and decodes, `model` is the RolloutManager as
//! written, `validate` checks and resolves it into a `spec`, `render` builds objects and
//! [`emit`] writes text. [`pipeline`] ties them together as a pure function; [`commands`]
//! are the program's subcommands, over the [`options`] that [`cli`] parses. ARCHITECTURE.md
//! has the tree.
//!
//! The library's API is what the binary, the tests, the benchmarks and the fuzz target use:
//! the command line, the commands, the pipeline over [`Inputs`] and its diagnostics, the
//! writer and the schema. The stages themselves are internal.

// The public modules' docs name the internal stages they use; the docs are built (and checked
// in CI) with `--document-private-items`, where those links resolve.
#![allow(rustdoc::private_intra_doc_links)]

pub mod cli;
pub mod commands;
pub mod diag;
pub mod emit;
mod import;
pub mod input;
mod model;
pub mod options;
pub mod pipeline;
mod render;
pub mod schema;
mod spec;
mod validate;

pub use input::source::{Inputs, Source};
pub use options::{Format, Options};
pub use pipeline::{Rendered, render};
