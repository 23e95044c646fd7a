//! winguard keeps Windows workloads on Kubernetes from failing.
//!
//! The architecture follows `DESIGN.md`: a pure [`engine`] evaluates data-driven [`rules`] on
//! objects read by the [`manifest`] loader, using the Windows target-OS `model` and the cluster
//! profile from [`config`]; [`report`] renders findings, [`cli`] wires it together. Objects are
//! [`value::Value`]s throughout.
//!
//! The public surface is what the binary, the tests, the benches and the fuzz targets use; the
//! rest is `pub(crate)`, and `unreachable_pub` keeps it so.

#![warn(unreachable_pub)]

pub mod admission;
pub mod allocator;
pub mod cache;
pub mod cli;
pub mod config;
pub mod engine;
pub mod error;
pub mod expr;
pub(crate) mod fix;
pub mod k8s;
pub(crate) mod kustomize;
pub mod manifest;
pub mod pipeline;
pub mod policy;
pub mod registry;
pub mod report;
pub mod rules;
pub(crate) mod serve;
pub(crate) mod windows;
pub(crate) mod write;

/// The value model and its readers, a crate of their own (`crates/yaml-value`) so that the Helm
/// engine can read YAML as winguard does without depending on winguard.
pub use yaml_value as value;
pub use yaml_value::json;
