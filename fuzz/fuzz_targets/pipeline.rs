//! The whole pipeline over arbitrary bytes, as `rollouts-render render` on standard input.
//! Invariants: no panic; an error means exit status 1, at least one error diagnostic and no
//! stdout; success means stdout that parses back and is the same on a second run.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rollouts_render::options::{Namespace, Options};
use rollouts_render::commands::render::run_bytes;
use rollouts_render::commands::{INVALID_INPUT, SUCCESS};

fuzz_target!(|data: &[u8]| {
    let options = Options {
        namespace: Some(Namespace::parse("fuzz").expect("a valid namespace")),
        ..Options::default()
    };
    let outcome = run_bytes(data, &options);
    match outcome.status {
        INVALID_INPUT => {
            assert!(outcome.output.is_none());
            assert!(outcome.diagnostics.has_errors());
        }
        SUCCESS => {
            let stdout = outcome.stdout();
            let parsed: Result<Vec<serde_json::Value>, _> = serde_saphyr::from_multiple(&stdout);
            assert!(parsed.is_ok(), "output does not parse back");
            assert_eq!(run_bytes(data, &options).stdout(), stdout);
        }
        other => panic!("unexpected exit status {other}"),
    }
});
