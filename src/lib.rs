//! rollouts-render: renders Argo Rollouts `RolloutManager` resources into the plain
//! Kubernetes manifests that install and configure the Argo Rollouts controller.
//!
//! The stages, one module each: [`source`] reads inputs, [`yaml`] composes documents,
//! [`de`] decodes them into the [`model`], [`validate`] checks and resolves them into a
//! [`spec`], [`mod@render`] builds objects from [`tables`], and [`emit`] writes text.
//! [`pipeline`] ties them together as a pure function; the binary only adds the command line.

pub mod app;
pub mod catalog;
pub mod cli;
pub mod de;
pub mod diag;
pub mod emit;
pub mod import;
pub mod model;
pub mod options;
pub mod params;
pub mod pipeline;
pub mod render;
pub mod schema;
pub mod source;
pub mod spec;
pub mod tables;
pub mod validate;
pub mod yaml;
pub mod yaml11;

pub use options::{Format, Options};
pub use pipeline::{Rendered, render};
pub use source::{Inputs, Source};
