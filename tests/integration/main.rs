//! Every integration test of the crate, one module per subject, in one test binary.
//!
//! One binary rather than one per file because each test binary is linked against the whole library
//! and its dependencies: 33 of them (then built with thin LTO) took 20 minutes of a cold CI run's 32
//! on the 2-core development machine. Run one subject with
//! `cargo test --profile ci --test integration cli::`.

mod common;

mod architecture;
mod arithmetic;
mod check_unplayable;
mod cli;
mod conformance;
mod convert_round_trip;
mod differential;
mod engine_corners;
mod engine_games;
mod engines_agree_on_random_programs;
mod evaluators;
mod frontend_corpus;
mod frontend_golden;
mod frontend_robust;
mod fuzz_stages;
mod games;
mod guide;
mod learning;
mod network;
mod network_speed_paths;
mod network_validate;
mod newcomer;
mod pipeline_games;
mod players;
mod protocol;
mod readme;
mod referee;
mod rewrites;
mod search;
mod stages;
mod web_api;
mod web_browser;
