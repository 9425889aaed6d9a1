//! gRPC through the tower layer, one test binary (features `tower` and `tonic`, which every
//! module here needs: Cargo.toml's `required-features`): a tonic client over a real `Channel`
//! against real servers on loopback — gRPC's status table and writes through `RetryLayer`, and
//! gRPC's service config applied by `ServiceConfigLayer`.

mod service_config;
mod writes;

#[path = "../support/grpc_raw.rs"]
mod grpc_raw;
#[path = "../support/h2_frames.rs"]
mod h2_frames;
