//! rollouts-render: renders Argo Rollouts `RolloutManager` resources into the plain
//! Kubernetes manifests that install and configure the Argo Rollouts controller.
//!
//! The stages: [`input`] reads and decodes, [`model`] is the RolloutManager as written,
//! [`validate`] checks and resolves it into a [`spec`], [`mod@render`] builds objects and
//! [`emit`] writes text. [`pipeline`] ties them together as a pure function; [`commands`]
//! are the program's subcommands, over the options that [`cli`] parses.

pub mod cli;
pub mod commands;
pub mod diag;
pub mod emit;
pub mod import;
pub mod input;
pub mod model;
pub mod options;
pub mod pipeline;
pub mod render;
pub mod schema;
pub mod spec;
pub mod validate;

pub use input::source::{Inputs, Source};
pub use options::{Format, Options};
pub use pipeline::{Rendered, render};
