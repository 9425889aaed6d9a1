//! The guide, on docs.rs: one page per task, each a doc-only module.
//!
#![doc = include_str!("index.md")]

// A page that shows a recipe is one file, `<page>.rs`: its `//!` prose includes each program of
// `examples/guide_*.rs` whole, in place, inside a ```` ```rust,no_run ```` fence: compiled by
// `cargo test`, and run by CI from `examples/`, so not run twice here.

#[doc = include_str!("attribute.md")]
pub mod attribute {}

#[doc = include_str!("errors.md")]
pub mod errors {}

pub mod http_clients;

pub mod grpc;

pub mod writes;

pub mod chain;

pub mod databases;

pub mod protecting;

#[doc = include_str!("hedging.md")]
pub mod hedging {}

#[doc = include_str!("deadlines.md")]
pub mod deadlines {}

#[doc = include_str!("polling.md")]
pub mod polling {}

pub mod observability;

#[doc = include_str!("testing.md")]
pub mod testing {}

#[doc = include_str!("simulations.md")]
pub mod simulations {}
