//! Input: from bytes on disk or stdin to located, typed values.
//!
//! [`source`] reads files, directories and standard input (the only input I/O); `yaml`
//! composes parser events into located node trees; `yaml11` resolves scalars as Kubernetes'
//! YAML 1.1 reader does; `de` decodes node trees into typed values, `located` ones carrying
//! their field path and position.

pub(crate) mod de;
pub(crate) mod located;
pub mod source;
pub(crate) mod yaml;
pub(crate) mod yaml11;
