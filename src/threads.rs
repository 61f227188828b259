//! Threads named for what they do, so that a profile of a run (`perf`, `top -H`, a debugger)
//! says which part of the run spent the time: `benches/bench.sh threads` sums a run's processor
//! time by phase and by these names (docs/benchmarks.md). Linux keeps the first 15 bytes of a
//! name.

use std::thread::{Builder, JoinHandle, Scope, ScopedJoinHandle};

/// `f` on a thread of `scope` named `name`. As [`Scope::spawn`], it panics only when the system
/// cannot start a thread.
pub(crate) fn scoped<'scope, 'env, T: Send + 'scope>(
    scope: &'scope Scope<'scope, 'env>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> ScopedJoinHandle<'scope, T> {
    Builder::new()
        .name(name.to_string())
        .spawn_scoped(scope, f)
        .unwrap_or_else(|e| panic!("failed to spawn the {name} thread: {e}"))
}

/// `f` on a thread of its own named `name`, as [`std::thread::spawn`].
pub(crate) fn detached<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    Builder::new()
        .name(name.to_string())
        .spawn(f)
        .unwrap_or_else(|e| panic!("failed to spawn the {name} thread: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_carries_its_name() {
        let name = std::thread::scope(|scope| {
            super::scoped(scope, "csv", || {
                std::thread::current().name().map(str::to_string)
            })
            .join()
            .unwrap()
        });
        assert_eq!(name.as_deref(), Some("csv"));
        let name = super::detached("free rows", || {
            std::thread::current().name().map(str::to_string)
        })
        .join()
        .unwrap();
        assert_eq!(name.as_deref(), Some("free rows"));
    }
}
