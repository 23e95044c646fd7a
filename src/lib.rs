//! winguard keeps Windows workloads on Kubernetes from failing.
//!
//! The architecture follows `DESIGN.md`: a pure [`engine`] evaluates data-driven [`rules`] on
//! objects read by the [`manifest`] loader, using the Windows target-OS [`model`] and the cluster
//! profile from [`config`]; [`report`] renders findings, [`cli`] wires it together. Objects are
//! [`value::Value`]s throughout.

pub mod admission;
pub mod atomic;
pub mod chart;
pub mod cli;
pub mod config;
pub mod engine;
pub mod error;
pub mod expr;
pub mod fix;
pub mod kustomize;
pub mod manifest;
pub mod model;
pub mod policy;
pub mod report;
pub mod rules;
pub mod serve;
pub mod value;
