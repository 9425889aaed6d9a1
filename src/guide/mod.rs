//! The guide, on docs.rs: one page per task, each a doc-only module.
//!
#![doc = include_str!("index.md")]

/// A recipe: the whole program of `examples/<file>`, compiled by `cargo test` (and run by CI
/// from `examples/`, so not run twice here).
macro_rules! recipe {
    ($file:literal) => {
        concat!(
            "```rust,no_run\n",
            include_str!(concat!("../../examples/", $file)),
            "```\n"
        )
    };
}

#[doc = include_str!("attribute.md")]
pub mod attribute {}

#[doc = include_str!("errors.md")]
pub mod errors {}

#[doc = include_str!("http_clients.md")]
#[doc = recipe!("guide_reqwest.rs")]
#[doc = include_str!("http_clients_2.md")]
#[doc = recipe!("guide_hyper.rs")]
#[doc = include_str!("http_clients_3.md")]
#[doc = recipe!("guide_reqwest_middleware.rs")]
#[doc = include_str!("http_clients_4.md")]
pub mod http_clients {}

pub mod grpc;

#[doc = include_str!("writes.md")]
#[doc = recipe!("guide_writes.rs")]
#[doc = include_str!("writes_2.md")]
pub mod writes {}

#[doc = include_str!("chain.md")]
#[doc = recipe!("guide_chain.rs")]
#[doc = include_str!("chain_2.md")]
pub mod chain {}

#[doc = include_str!("databases.md")]
#[doc = recipe!("guide_sqlx.rs")]
#[doc = include_str!("databases_2.md")]
pub mod databases {}

#[doc = include_str!("protecting.md")]
#[doc = recipe!("guide_protecting.rs")]
#[doc = include_str!("protecting_2.md")]
pub mod protecting {}

#[doc = include_str!("hedging.md")]
pub mod hedging {}

#[doc = include_str!("deadlines.md")]
pub mod deadlines {}

#[doc = include_str!("polling.md")]
pub mod polling {}

#[doc = include_str!("observability.md")]
#[doc = recipe!("guide_observability.rs")]
#[doc = include_str!("observability_2.md")]
pub mod observability {}

#[doc = include_str!("testing.md")]
pub mod testing {}

#[doc = include_str!("simulations.md")]
pub mod simulations {}
