//! The pipeline of a run, above the layers it composes: an experiment and its corpus loaded
//! and checked against each other (`load`), then analysed, written and rendered by the
//! commands that run it.

pub mod load;
