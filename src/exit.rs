//! Exit statuses, decided here and nowhere else.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | done: the command ran, and where it judges (gate, trust) the answer is yes |
//! | 1 | done, and the answer is no: a gate check failed, the judges are not trustworthy |
//! | 2 | bad input or usage: nothing was computed from it (and nothing half-written) |
//! | 130 | interrupted (`collect` after Ctrl-C): what was recorded is whole, and resumable |

use std::process::ExitCode;

use crate::error::Error;

pub const SUCCESS: u8 = 0;
pub const FAILURE: u8 = 1;
pub const BAD_INPUT: u8 = 2;
/// 128 + SIGINT, as a shell reports a command stopped by Ctrl-C.
pub const INTERRUPTED: u8 = 130;

/// How a command that ran to the end judged its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    /// The command ran to the end and found the input unusable (`validate` listing problems).
    BadInput,
    /// The command was stopped by an interrupt before it finished (`collect`).
    Interrupted,
}

/// The one mapping from a command's result to the process's exit status.
pub fn status(result: &Result<Verdict, Error>) -> ExitCode {
    ExitCode::from(match result {
        Ok(Verdict::Pass) => SUCCESS,
        Ok(Verdict::Fail) => FAILURE,
        Ok(Verdict::BadInput) => BAD_INPUT,
        Ok(Verdict::Interrupted) => INTERRUPTED,
        Err(e) => error_status(e),
    })
}

/// Every error is bad input or usage: what could not be read, or written, as asked.
fn error_status(e: &Error) -> u8 {
    match e {
        Error::Input(_) | Error::Inputs(_) | Error::Read { .. } | Error::Write(_) => BAD_INPUT,
    }
}
