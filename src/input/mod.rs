//! Input: from bytes on disk or stdin to located, typed values.
//!
//! [`source`] reads files, directories and standard input (the only input I/O); [`yaml`]
//! composes parser events into located node trees; [`yaml11`] resolves scalars as
//! Kubernetes' YAML 1.1 reader does; [`de`] decodes node trees into typed values.

pub mod de;
pub mod source;
pub mod yaml;
pub mod yaml11;
