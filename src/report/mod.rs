//! Rendering the result model: each output format is its own module.

pub mod tables;
