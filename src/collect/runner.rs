//! Live collection, the part that runs commands (docs/guides/live-collection.md), on tokio: at most `concurrency`
//! calls at once; each in its own process group, killed with everything it started at the
//! timeout; retried with exponential backoff; argv only, never a shell. Finished calls are
//! handed to one [`Sink`] on the driving task, so whatever it writes is written by one writer.
//!
//! Interruption: the first SIGINT, SIGTERM or SIGHUP (a closed terminal or SSH session) stops
//! launching and lets running calls finish or time out (a call waiting to retry is abandoned,
//! not recorded); a second kills the running calls, which are not recorded either. Either way
//! what was recorded stays consistent, and what was not is left for `--resume`.
//!
//! Nothing a call starts outlives it. Each call runs in its own process group, and on Linux
//! calibench also becomes a child subreaper (orphaned descendants are re-parented to it rather
//! than to init) and tags each call's processes with `CALIBENCH_CALL` in their environment,
//! which every descendant inherits. When a call ends, for whatever reason, its group is killed
//! and so is every process that carries its tag, even one that started its own session
//! (`setsid`) and so left the group; what calibench adopted is reaped. When the collection
//! ends, any process still carrying one of its tags is killed. Elsewhere only the group is
//! killed.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::plan::Limits;

/// The most a command may print on stdout; more is a failed call, not an out-of-memory.
pub const STDOUT_LIMIT: usize = 16 << 20;

/// What every call shares.
pub struct Context {
    /// The resolved program (`command[0]`), run with `cwd` as its working directory.
    pub program: PathBuf,
    pub cwd: PathBuf,
    /// The run directory, absolute: artifacts go under it.
    pub run_dir: PathBuf,
    pub run_id: String,
    /// The stage (`reviewers`, `validators`, `judges`), given to the command as
    /// `CALIBENCH_STAGE`.
    pub stage: &'static str,
    /// Concurrency, timeout, retries; the first retry waits `backoff`, each next one twice as
    /// long (at most 60 s).
    pub limits: Limits,
    /// What a call's output must be, and what its line is.
    pub protocol: Arc<dyn Protocol>,
    /// Whether what the calls left running is looked for and ended once they have all ended
    /// (a sequential collection does it once, when it stops, not after each batch).
    pub sweep: bool,
}

/// One call: its argv (`argv[0]` is the context's program), its stdin, and where it may write
/// a full-detail artifact (relative to the run directory), if anywhere.
#[derive(Clone, Debug)]
pub struct Job {
    pub argv: Vec<String>,
    pub stdin: Arc<Vec<u8>>,
    pub artifact: Option<PathBuf>,
}

/// A stage's contract with its command (docs/guides/live-collection.md): the line a call's stdout makes, or why
/// it makes none, and the line recorded for a call that failed. Pure, called from the runner.
pub trait Protocol: Send + Sync {
    /// The line recorded for the call at plan position `index` that exited 0 printing
    /// `stdout`, or the reason its output is not acceptable (the call is then retried, and
    /// recorded failed when retries run out).
    fn accept(&self, index: usize, stdout: &[u8]) -> Result<Map<String, Value>, String>;
    /// The line recorded for the call at plan position `index` that failed for `reason`.
    fn failed(&self, index: usize, reason: &str) -> Map<String, Value>;
    /// Whether an accepted line records the call's wall time as `elapsed_ms` (a return does;
    /// a command that printed its own keeps it).
    fn timed(&self) -> bool {
        false
    }
}

/// Why a call failed (the line's `reason` begins with its phrase).
pub use crate::corpus::call::Failure;

/// A call that ended with a line to record.
#[derive(Clone, Debug)]
pub struct Finished {
    /// Position in the plan.
    pub index: usize,
    pub line: Map<String, Value>,
    pub failure: Option<Failure>,
}

/// Receives what the collection does, on the driving task.
pub trait Sink {
    /// A call ended; its line must be recorded before the next one is handed over.
    fn record(&mut self, finished: Finished) -> std::io::Result<()>;
    /// A stop was asked for (`level` 1: stop launching; 2: kill running calls).
    fn interrupted(&mut self, level: u8, running: usize);
}

/// How the collection ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ended {
    /// Calls launched and left unrecorded because of an interruption.
    pub abandoned: usize,
    /// Calls never launched because of an interruption.
    pub not_started: usize,
    pub interrupted: bool,
}

/// Set once a stop is asked for (SIGINT, SIGTERM, SIGHUP), while calls run or between them:
/// no call is launched after it, whenever it came.
pub static STOPPED: AtomicBool = AtomicBool::new(false);

/// Listens for a stop for the rest of the process (a collection of several batches, with
/// looks between them): a signal that comes while no calls run is kept in [`STOPPED`], never
/// lost. Started once.
pub fn watch_for_stops() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        crate::threads::detached("stop signals", move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                let _ = ready_tx.send(());
                return;
            };
            runtime.block_on(async move {
                let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                    signal(SignalKind::hangup()),
                ) else {
                    let _ = ready_tx.send(());
                    return;
                };
                let _ = ready_tx.send(());
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                    _ = hup.recv() => {}
                }
                STOPPED.store(true, Ordering::SeqCst);
            });
        });
        // Listening before the first call is launched.
        let _ = ready_rx.recv();
    });
}

/// Runs `calls` (with their plan positions) and hands each finished one to `sink`.
pub fn run(ctx: Context, calls: Vec<(usize, Job)>, sink: &mut dyn Sink) -> std::io::Result<Ended> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    descendants::become_subreaper();
    let sweep = ctx.sweep;
    let ended = runtime.block_on(drive(Arc::new(ctx), calls, sink));
    // Whatever a call left behind (a daemon whose parent exited early), it dies with the
    // collection.
    if sweep {
        descendants::kill_tagged(&descendants::prefix(), None);
    }
    ended
}

async fn drive(
    ctx: Arc<Context>,
    calls: Vec<(usize, Job)>,
    sink: &mut dyn Sink,
) -> std::io::Result<Ended> {
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let (level_tx, level_rx) = watch::channel(0u8);
    // A stop asked for before these calls (between two batches, during a look) launches none.
    let mut level = u8::from(STOPPED.load(Ordering::SeqCst));
    let mut ended = Ended {
        interrupted: level > 0,
        ..Ended::default()
    };
    let mut set: JoinSet<Option<Finished>> = JoinSet::new();
    let mut pending = calls.into_iter();
    let mut write_error = None;
    loop {
        while level == 0 && set.len() < ctx.limits.concurrency.max(1) {
            let Some((index, call)) = pending.next() else {
                break;
            };
            set.spawn(run_call(ctx.clone(), index, call, level_rx.clone()));
        }
        if set.is_empty() {
            break;
        }
        let mut stop = false;
        tokio::select! {
            joined = set.join_next() => match joined {
                Some(Ok(Some(finished))) => {
                    if let Err(e) = sink.record(finished) {
                        // Nothing more can be recorded: kill what runs and report the error.
                        write_error = Some(e);
                        level = 2;
                        let _ = level_tx.send(level);
                    }
                }
                Some(Ok(None)) | Some(Err(_)) => ended.abandoned += 1,
                None => {}
            },
            _ = sigint.recv() => stop = true,
            _ = sigterm.recv() => stop = true,
            _ = sighup.recv() => stop = true,
        }
        if stop && level < 2 {
            STOPPED.store(true, Ordering::SeqCst);
            level += 1;
            ended.interrupted = true;
            let _ = level_tx.send(level);
            sink.interrupted(level, set.len());
        }
    }
    ended.not_started = pending.count();
    match write_error {
        Some(e) => Err(e),
        None => Ok(ended),
    }
}

/// One call with its retries; `None` when an interruption left it unrecorded.
async fn run_call(
    ctx: Arc<Context>,
    index: usize,
    call: Job,
    mut level: watch::Receiver<u8>,
) -> Option<Finished> {
    let mut attempt = 1;
    loop {
        match attempt_once(&ctx, index, &call, attempt, &mut level).await {
            Attempt::Killed => return None,
            Attempt::Returned(line) => {
                return Some(Finished {
                    index,
                    line,
                    failure: None,
                })
            }
            Attempt::Failed(failure, reason) => {
                if attempt > ctx.limits.retries {
                    let reason = if attempt > 1 {
                        failure.reason(&format!("{reason} (after {attempt} attempts)"))
                    } else {
                        failure.reason(&reason)
                    };
                    return Some(Finished {
                        index,
                        line: ctx.protocol.failed(index, &reason),
                        failure: Some(failure),
                    });
                }
                // A retry is a new launch: not after a stop was asked for.
                let wait = ctx
                    .limits
                    .backoff
                    .saturating_mul(1 << (attempt - 1).min(16))
                    .min(Duration::from_secs(60));
                if *level.borrow() > 0 {
                    return None;
                }
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = level.changed() => return None,
                }
                attempt += 1;
            }
        }
    }
}

enum Attempt {
    Returned(Map<String, Value>),
    Failed(Failure, String),
    Killed,
}

/// One attempt of one call: the command started in its own process group, fed its stdin, its
/// stdout and stderr read, raced against the timeout and a kill; then its end judged.
async fn attempt_once(
    ctx: &Context,
    index: usize,
    call: &Job,
    attempt: u32,
    level: &mut watch::Receiver<u8>,
) -> Attempt {
    let artifact = match prepare_artifact(ctx, call) {
        Ok(a) => a,
        Err(failed) => return failed,
    };
    let tag = descendants::new_tag();
    let mut command = command_for(ctx, call, attempt, &tag, artifact.as_deref());
    let started = std::time::Instant::now();
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Attempt::Failed(Failure::Start, format!("{}: {e}", ctx.program.display()))
        }
    };
    let Some(pid) = child.id() else {
        return Attempt::Failed(
            Failure::Start,
            "it exited before it could be watched".into(),
        );
    };
    let end = {
        let killed = async {
            loop {
                if *level.borrow_and_update() >= 2 || level.changed().await.is_err() {
                    // The driver is gone or asks for a kill.
                    return;
                }
            }
        };
        tokio::select! {
            done = run_to_end(&mut child, call, pid, &tag) => End::Done(done),
            _ = tokio::time::sleep(ctx.limits.timeout) => End::TimedOut,
            _ = killed => End::Killed,
        }
    };
    let elapsed = started.elapsed();
    // Whatever happened, nothing the call started outlives it.
    kill_group(pid);
    descendants::kill_tagged(&tag, Some(pid));
    let mut attempt = judge(ctx, index, &mut child, end).await;
    if let Attempt::Returned(line) = &mut attempt {
        if ctx.protocol.timed() && !line.contains_key("elapsed_ms") {
            // From launch to exit, in whole milliseconds: the attempt that returned, not the
            // failed attempts or the waits before it.
            line.insert("elapsed_ms".into(), Value::from(elapsed.as_millis() as u64));
        }
    }
    attempt
}

/// Where the call's artifact goes, emptied of an earlier attempt's and with its folder made.
fn prepare_artifact(ctx: &Context, call: &Job) -> Result<Option<PathBuf>, Attempt> {
    let Some(artifact) = call.artifact.as_ref().map(|a| ctx.run_dir.join(a)) else {
        return Ok(None);
    };
    // A failed earlier attempt's artifact must not pass for this one's.
    let _ = std::fs::remove_file(&artifact);
    if let Some(dir) = artifact.parent() {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return Err(Attempt::Failed(
                Failure::Start,
                format!("cannot create {}: {e}", dir.display()),
            ));
        }
    }
    Ok(Some(artifact))
}

/// The command of one attempt: its argv, folder and environment, piped, in a process group of
/// its own, tagged so that what it starts can be found.
fn command_for(
    ctx: &Context,
    call: &Job,
    attempt: u32,
    tag: &str,
    artifact: Option<&std::path::Path>,
) -> Command {
    let mut command = Command::new(&ctx.program);
    command
        .args(call.argv.get(1..).unwrap_or_default())
        .current_dir(&ctx.cwd)
        .env(descendants::TAG, tag)
        .env("CALIBENCH_RUN_ID", &ctx.run_id)
        .env("CALIBENCH_STAGE", ctx.stage)
        .env("CALIBENCH_ATTEMPT", attempt.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    match artifact {
        Some(a) => command.env("CALIBENCH_ARTIFACT", a),
        None => command.env_remove("CALIBENCH_ARTIFACT"),
    };
    command
}

/// How an attempt ended.
enum End {
    Done(Ran),
    TimedOut,
    Killed,
}

/// A command that ran to its end: stdout (or why not), the tail of stderr, its exit status,
/// and whether something it started held its pipes open after it exited.
struct Ran {
    out: Result<Vec<u8>, Stdout>,
    err: String,
    status: std::io::Result<std::process::ExitStatus>,
    held_open: bool,
}

/// Feeds the command its stdin and reads its stdout (up to the cap) and stderr until it has
/// exited and its pipes are closed.
async fn run_to_end(child: &mut tokio::process::Child, call: &Job, pid: u32, tag: &str) -> Ran {
    let input = call.stdin.clone();
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let feed = async move {
        if let Some(mut s) = stdin {
            // A command that does not read its stdin closes the pipe: not an error.
            let _ = s.write_all(&input).await;
            let _ = s.shutdown().await;
        }
    };
    let read_out = async move {
        let Some(out) = stdout else {
            return Ok(Vec::new());
        };
        let mut buf = Vec::new();
        let read = out
            .take(STDOUT_LIMIT as u64 + 1)
            .read_to_end(&mut buf)
            .await;
        if buf.len() > STDOUT_LIMIT {
            kill_group(pid);
            return Err(Stdout::OverCap);
        }
        read.map(|_| buf)
            .map_err(|e| Stdout::Unreadable(e.to_string()))
    };
    let io = async { tokio::join!(feed, read_out, tail(stderr)) };
    tokio::pin!(io);
    let wait = child.wait();
    tokio::pin!(wait);
    let (mut pipes, mut status) = (None, None);
    let mut held_open = false;
    while pipes.is_none() || status.is_none() {
        tokio::select! {
            done = &mut io, if pipes.is_none() => pipes = Some(done),
            ended = &mut wait, if status.is_none() => status = Some(ended),
        }
        // The command has exited but its pipes are still open: something it started in the
        // background holds them. A short grace for what is in flight, then its group is ended
        // (which closes them) and what it printed is read as its return.
        if let (None, Some(_)) = (&pipes, &status) {
            match tokio::time::timeout(PIPE_GRACE, &mut io).await {
                Ok(done) => pipes = Some(done),
                Err(_) => {
                    held_open = true;
                    kill_group(pid);
                    descendants::kill_tagged(tag, Some(pid));
                    pipes = Some(io.as_mut().await);
                }
            }
        }
    }
    let ((_, out, err), status) = (pipes.expect("read"), status.expect("waited"));
    Ran {
        out,
        err,
        status,
        held_open,
    }
}

/// What an attempt's end means: killed, failed (and why), or a return the protocol accepts.
async fn judge(
    ctx: &Context,
    index: usize,
    child: &mut tokio::process::Child,
    end: End,
) -> Attempt {
    let ran = match end {
        End::Killed => {
            let _ = child.wait().await;
            return Attempt::Killed;
        }
        End::TimedOut => {
            let _ = child.wait().await;
            return Attempt::Failed(
                Failure::Timeout,
                format!(
                    "after {}; its process group was killed",
                    seconds(ctx.limits.timeout)
                ),
            );
        }
        End::Done(ran) => ran,
    };
    let status = match ran.status {
        Ok(status) => status,
        Err(e) => return Attempt::Failed(Failure::Exit, format!("could not be waited for: {e}")),
    };
    let stderr = if ran.err.is_empty() {
        String::new()
    } else {
        format!("; stderr: {}", ran.err)
    };
    // calibench killed it for printing too much: that, not the signal, is the reason.
    if let Err(Stdout::OverCap) = ran.out {
        return Attempt::Failed(Failure::Output, over_cap());
    }
    if !status.success() {
        let how = match (status.code(), status.signal()) {
            (Some(code), _) => format!("status {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => "ended abnormally".to_string(),
        };
        return Attempt::Failed(Failure::Exit, format!("{how}{stderr}"));
    }
    match ran.out {
        Err(Stdout::Unreadable(e)) => {
            Attempt::Failed(Failure::Output, format!("stdout could not be read: {e}"))
        }
        Err(Stdout::OverCap) => Attempt::Failed(Failure::Output, over_cap()),
        Ok(out) => match ctx.protocol.accept(index, &out) {
            Ok(line) => Attempt::Returned(line),
            Err(reason) if ran.held_open => Attempt::Failed(
                Failure::Output,
                format!(
                    "exited with status 0, but a process it started kept stdout open for {} more, and what it printed is no return: {reason}",
                    seconds(PIPE_GRACE)
                ),
            ),
            Err(reason) => Attempt::Failed(Failure::Output, reason),
        },
    }
}

/// How long a command's pipes may stay open after it has exited (a background process it
/// started still holding them) before its group is ended and its output read as it stands.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// The reason recorded for a call that printed more than [`STDOUT_LIMIT`].
fn over_cap() -> String {
    format!(
        "printed more than the cap of {} MiB on stdout, so it was stopped",
        STDOUT_LIMIT >> 20
    )
}

/// Why a call's stdout could not be taken as its return.
enum Stdout {
    /// It printed more than [`STDOUT_LIMIT`]; its group was killed for it.
    OverCap,
    Unreadable(String),
}

/// Reads a stream to its end, keeping its last line or so for a failure's reason.
async fn tail(stream: Option<impl AsyncRead + Unpin>) -> String {
    const KEEP: usize = 4096;
    let Some(mut stream) = stream else {
        return String::new();
    };
    let mut kept: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(n) = stream.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&chunk[..n]);
        if kept.len() > 2 * KEEP {
            kept.drain(..kept.len() - KEEP);
        }
    }
    let text = String::from_utf8_lossy(&kept);
    let last: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let joined = last[last.len().saturating_sub(3)..].join(" | ");
    let chars: Vec<char> = joined.chars().collect();
    if chars.len() > 300 {
        format!("…{}", chars[chars.len() - 300..].iter().collect::<String>())
    } else {
        joined
    }
}

/// Kills the process group `pgid` (the call and everything it started); a group already gone
/// is not an error.
fn kill_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) with a negative pid signals a process group; it reads no memory of ours.
    // The group was created for this call (process_group(0)), so its id is the child's pid, and
    // a pid is not reused while a group of that id exists.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

/// Finding and killing what a call started, wherever it went (see the module docs).
pub mod descendants {
    use super::{AtomicU64, Ordering};

    /// The environment variable that tags a call's processes.
    pub const TAG: &str = "CALIBENCH_CALL";

    /// This collection's tags start with its process id, so that two collections on one
    /// machine never touch each other's processes.
    pub fn prefix() -> String {
        format!("{}-", std::process::id())
    }

    /// A tag no other call of this process has.
    pub fn new_tag() -> String {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        format!("{}{}", prefix(), NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// Makes orphaned descendants this process's children, so that they can be reaped.
    pub fn become_subreaper() {
        #[cfg(target_os = "linux")]
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) sets a flag of this process; it reads and
        // writes no memory of ours.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
    }

    /// Kills every process whose tag is `tag` (with `except`, the call's own child, which the
    /// runtime waits for), or starts with it when it is a [`prefix`]; then reaps those that
    /// are this process's children. Rounds repeat while a kill let a fork slip through.
    pub fn kill_tagged(tag: &str, except: Option<u32>) {
        #[cfg(target_os = "linux")]
        {
            let exact = tag != prefix();
            let mut killed = Vec::new();
            for _ in 0..10 {
                let found = tagged(tag, exact);
                if found.is_empty() {
                    break;
                }
                for pid in found {
                    // SAFETY: kill(2) signals a process; it reads no memory of ours.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    if Some(pid as u32) != except && !killed.contains(&pid) {
                        killed.push(pid);
                    }
                }
            }
            reap(&killed);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (tag, except);
    }

    /// Kills what calls of an earlier collection of the run `run_id` left running when that
    /// collection died without ending them (a `kill -9`): processes whose environment names
    /// the run and a call tag of a process that no longer lives. A collection of another run
    /// of the same id that still runs is left alone (its tag's process lives).
    pub fn kill_orphans_of(run_id: &str) {
        #[cfg(target_os = "linux")]
        {
            let run = format!("CALIBENCH_RUN_ID={run_id}");
            let call = format!("{TAG}=");
            let Ok(entries) = std::fs::read_dir("/proc") else {
                return;
            };
            let mut killed = Vec::new();
            for entry in entries.filter_map(Result::ok) {
                let Some(pid) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<libc::pid_t>().ok())
                else {
                    continue;
                };
                let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                    continue;
                };
                let vars: Vec<&[u8]> = environ.split(|&b| b == 0).collect();
                if !vars.contains(&run.as_bytes()) {
                    continue;
                }
                let owner = vars
                    .iter()
                    .find_map(|v| v.strip_prefix(call.as_bytes()))
                    .and_then(|tag| std::str::from_utf8(tag).ok())
                    .and_then(|tag| tag.split('-').next())
                    .and_then(|p| p.parse::<u32>().ok());
                if let Some(owner) = owner {
                    if !std::path::Path::new(&format!("/proc/{owner}")).exists() {
                        // SAFETY: kill(2) signals a process; it reads no memory of ours.
                        unsafe {
                            libc::kill(pid, libc::SIGKILL);
                        }
                        killed.push(pid);
                    }
                }
            }
            reap(&killed);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = run_id;
    }

    /// Live processes (zombies left out) whose environment holds the tag.
    #[cfg(target_os = "linux")]
    fn tagged(tag: &str, exact: bool) -> Vec<libc::pid_t> {
        let me = std::process::id();
        let needle = format!("{TAG}={tag}");
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit(')')
                        .next()
                        .map(|r| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            if zombie {
                continue;
            }
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            let hit = environ.split(|&b| b == 0).any(|var| {
                if exact {
                    var == needle.as_bytes()
                } else {
                    var.starts_with(needle.as_bytes())
                }
            });
            if hit {
                if let Ok(pid) = libc::pid_t::try_from(pid) {
                    out.push(pid);
                }
            }
        }
        out
    }

    /// Waits for killed processes that are (or, once their parent dies, become) this process's
    /// children, so that none is left a zombie; gives up on each after about half a second.
    #[cfg(target_os = "linux")]
    fn reap(pids: &[libc::pid_t]) {
        for &pid in pids {
            for _ in 0..50 {
                let mut status = 0;
                // SAFETY: waitpid writes the status into a local; WNOHANG never blocks.
                let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
                if r != 0 {
                    break; // reaped, or not our child (ECHILD): its own parent reaps it
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}
