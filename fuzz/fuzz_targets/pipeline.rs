//! The whole pipeline over arbitrary bytes, as `rollouts-render render` on standard input.
//! Invariants: no panic; an error means exit status 1, at least one error diagnostic and no
//! stdout; success means stdout that parses back and is the same on a second run.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rollouts_render::Options;
use rollouts_render::commands::{self as app, INVALID_INPUT, SUCCESS};

fuzz_target!(|data: &[u8]| {
    let options = Options {
        namespace: Some("fuzz".into()),
        ..Options::default()
    };
    let outcome = app::run_bytes(data, &options);
    match outcome.status {
        INVALID_INPUT => {
            assert!(outcome.output.is_none());
            assert!(outcome.diagnostics.has_errors());
        }
        SUCCESS => {
            let stdout = outcome.stdout();
            let parsed: Result<Vec<serde_json::Value>, _> = serde_saphyr::from_multiple(&stdout);
            assert!(parsed.is_ok(), "output does not parse back");
            assert_eq!(app::run_bytes(data, &options).stdout(), stdout);
        }
        other => panic!("unexpected exit status {other}"),
    }
});
