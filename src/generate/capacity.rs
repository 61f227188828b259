//! The 50-query capacity review (`corpora/capacity-50`): an agent answering questions about a
//! C++ code base with find, grep, references, read, discovery, cmake, ctest and git, shaped like
//! the phase-1 review summarized in REFERENCE.md.
//!
//! What is modelled is the agent's behaviour, not the figures:
//! * Most queries locate one symbol and read it: find + read + grep + read. Some only find it
//!   and read one file; a few are verification questions (a build, a test run), a few lean on
//!   project discovery or git history, and one errors out before any tool ran.
//! * The recorded agent scored every tool with the per-tool table (its `after_*` functions) and
//!   recorded the scores; it averaged them with a 0.7 recovery gate, so nearly every query went
//!   back to look again: the recovery tools are in the traces.
//! * The hits, file counts and targets vary within what each profile means: the per-tool
//!   scores, and so the recorded model's confidences, depend only on the profile.
//! * Answers: right on the first pass except for the errored query, as in the review.
//!
//! The figures (the two confidence values, the mean, the gate rate, the new model's bands) are
//! whatever `calibench run` computes on these traces.

use crate::corpus::files::File;
use serde_json::{json, Map, Value};

use super::{lines, Draw, Files};

const SYMBOLS: [(&str, &str); 24] = [
    ("MemoryManager", "core/memory"),
    ("ConfigLoader", "core/config"),
    ("RequestRouter", "net/http"),
    ("TaskScheduler", "runtime"),
    ("ThreadPool", "runtime"),
    ("BufferPool", "core/memory"),
    ("EventLoop", "runtime"),
    ("ConnectionManager", "net"),
    ("SessionStore", "net/http"),
    ("PluginRegistry", "plugins"),
    ("AssetCache", "render"),
    ("ShaderCompiler", "render"),
    ("MeshLoader", "render/io"),
    ("InputMapper", "ui"),
    ("LayoutEngine", "ui"),
    ("TextShaper", "ui/text"),
    ("JobQueue", "runtime"),
    ("LogSink", "core/log"),
    ("MetricsExporter", "telemetry"),
    ("TraceRecorder", "telemetry"),
    ("SchemaValidator", "data"),
    ("QueryPlanner", "data/sql"),
    ("IndexBuilder", "data/index"),
    ("BlobStore", "storage"),
];

/// The evidence profiles, with how many queries follow each.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Profile {
    /// find + read + grep + read on one symbol.
    Located,
    /// The same, but grep chased a helper name that does not match the symbol.
    LocatedHelperGrep,
    /// A narrow find (few hits), then a header read with two relevant files.
    LocatedBroadRead,
    /// grep + read, a test run with one failure, then a read of the test logs.
    Tests,
    /// find + read + grep, then a passing build.
    Build,
    /// Project discovery, a broad find, then two reads.
    Discovery,
    /// git history, a broad find, then two reads.
    History,
    /// A broad find and one read of an unrelated-looking file.
    FindRead,
    /// The same, with the read on the symbol's own file.
    FindReadOwn,
    /// Discovery and a read, no search.
    DiscoveryRead { matching: bool },
    /// A find with no hits, a broad read of build files, a passing build; recovery greps the
    /// symbol and reads it.
    WeakBuild,
    /// Little discovery and broad reads; four recovery attempts.
    WeakBroad,
    /// The agent failed before any tool ran.
    Error,
}

const PLAN: [(Profile, usize); 14] = [
    (Profile::Located, 15),
    (Profile::LocatedHelperGrep, 6),
    (Profile::LocatedBroadRead, 6),
    (Profile::Tests, 2),
    (Profile::Build, 2),
    (Profile::Discovery, 4),
    (Profile::History, 3),
    (Profile::FindRead, 4),
    (Profile::FindReadOwn, 2),
    (Profile::DiscoveryRead { matching: true }, 1),
    (Profile::DiscoveryRead { matching: false }, 1),
    (Profile::WeakBuild, 2),
    (Profile::WeakBroad, 1),
    (Profile::Error, 1),
];

/// One tool invocation as the agent recorded it.
struct Call {
    tool: &'static str,
    target: String,
    evidence: Vec<(&'static str, Value)>,
    score: f64,
    phase: Option<u32>,
}

fn call(tool: &'static str, target: impl Into<String>, score: f64) -> Call {
    Call {
        tool,
        target: target.into(),
        evidence: Vec::new(),
        score,
        phase: None,
    }
}

impl Call {
    fn with(mut self, key: &'static str, v: impl Into<Value>) -> Self {
        self.evidence.push((key, v.into()));
        self
    }

    /// A recovery-phase call of `attempt`.
    fn recovery(mut self, attempt: u32) -> Self {
        self.phase = Some(attempt);
        self
    }

    fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("tool".into(), json!(self.tool));
        if let Some(a) = self.phase {
            o.insert("phase".into(), json!("recovery"));
            o.insert("attempt".into(), json!(a));
        }
        o.insert("target".into(), json!(self.target));
        for (k, v) in &self.evidence {
            o.insert((*k).into(), v.clone());
        }
        o.insert("score".into(), json!(self.score));
        Value::Object(o)
    }
}

/// Hits in the band the agent's `after_search` maps to `score`.
fn hits(d: &mut Draw, score: f64) -> i64 {
    match score {
        s if s <= 0.10 => 0,
        s if s <= 0.60 => d.int(1, 3),
        s if s <= 0.80 => d.int(4, 10),
        _ => d.int(11, 60),
    }
}

fn search(d: &mut Draw, tool: &'static str, target: &str, score: f64) -> Call {
    let h = hits(d, score);
    call(tool, target, score).with("hits", h)
}

fn read(target: String, files: i64, relevant: i64, score: f64) -> Call {
    call("read", target, score)
        .with("files", files)
        .with("relevant", relevant)
}

/// The two recovery attempts the recorded agent made on a query it was unsure of: it asked for
/// references, then re-read the definition.
fn usual_recovery(d: &mut Draw, symbol: &str, header: &str) -> Vec<Call> {
    vec![
        search(d, "references", symbol, 0.60).recovery(1),
        read(header.to_string(), 1, 1, 0.55).recovery(2),
    ]
}

fn snake(symbol: &str) -> String {
    let mut s = String::new();
    for (i, c) in symbol.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(c.to_ascii_lowercase());
    }
    s
}

fn trace(d: &mut Draw, profile: Profile, symbol: &str, dir: &str) -> (String, Vec<Call>) {
    let header = format!("src/{dir}/{symbol}.h");
    let source = format!("src/{dir}/{symbol}.cpp");
    let helper = [
        "alloc_block",
        "on_tick",
        "flush_all",
        "resolve_path",
        "emit_frame",
    ];
    match profile {
        Profile::Located => {
            let mut t = vec![
                search(d, "find", symbol, 0.80),
                read(header.clone(), 1, 1, 0.55),
                search(d, "grep", &snake(symbol), 0.80),
                read(source, 1, 1, 0.55),
            ];
            t.extend(usual_recovery(d, symbol, &header));
            (format!("Where is {symbol} defined, and what owns it?"), t)
        }
        Profile::LocatedHelperGrep => {
            let h = d.pick(&helper);
            let mut t = vec![
                search(d, "find", symbol, 0.80),
                read(header.clone(), 1, 1, 0.55),
                search(d, "grep", h, 0.80),
                read(source, 1, 1, 0.55),
            ];
            t.extend(usual_recovery(d, symbol, &header));
            (format!("Which code path in {symbol} calls {h}?"), t)
        }
        Profile::LocatedBroadRead => {
            let mut t = vec![
                search(d, "find", symbol, 0.60),
                read(format!("src/{dir}/{symbol}"), 2, 2, 0.75),
                search(d, "grep", symbol, 0.80),
                read(source, 1, 1, 0.55),
            ];
            t.extend(usual_recovery(d, symbol, &header));
            (format!("How is {symbol} constructed and torn down?"), t)
        }
        Profile::Tests => {
            let run = d.int(10, 30);
            let mut t = vec![
                search(d, "grep", symbol, 0.80),
                read(header.clone(), 1, 1, 0.55),
                call("ctest", format!("{}_tests", snake(symbol)), 0.65)
                    .with("tests_run", run)
                    .with("tests_passed", run - 1)
                    .with("tests_failed", 1),
                read("build/Testing/Temporary".to_string(), d.int(6, 12), 0, 0.70),
            ];
            t.extend(usual_recovery(d, symbol, &header));
            (format!("Do the {symbol} tests pass on main?"), t)
        }
        Profile::Build => {
            let mut t = vec![
                search(d, "find", symbol, 0.60),
                read(format!("src/{dir}/CMakeLists.txt"), 1, 0, 0.35),
                search(d, "grep", symbol, 0.80),
                call("cmake", "all", 0.95).with("passed", true),
            ];
            t.extend(usual_recovery(d, symbol, &header));
            (
                format!("Does the tree still build with {symbol} enabled?"),
                t,
            )
        }
        Profile::Discovery => {
            let mut t = vec![
                call("discovery", "project", 0.50).with("factors", 2),
                search(d, "find", symbol, 0.90),
                read(format!("src/{dir}/{symbol}"), d.int(2, 5), 2, 0.75),
                read(header.clone(), 1, 1, 0.55),
            ];
            t.extend(usual_recovery(d, symbol, &header));
            (
                format!("Which module should a new {symbol} backend live in?"),
                t,
            )
        }
        Profile::History => {
            let mut t = vec![
                search(d, "git", symbol, 0.75),
                search(d, "find", symbol, 0.90),
                read(header.clone(), 1, 0, 0.35),
                read(format!("src/{dir}"), d.int(6, 15), 0, 0.70),
            ];
            t.extend(usual_recovery(d, symbol, &header));
            (format!("When did {symbol} change its locking, and why?"), t)
        }
        Profile::FindRead | Profile::FindReadOwn => {
            let target = if profile == Profile::FindReadOwn {
                header.clone()
            } else {
                format!("src/{dir}/README.md")
            };
            let mut t = vec![search(d, "find", symbol, 0.90), read(target, 1, 0, 0.35)];
            t.extend(usual_recovery(d, symbol, &header));
            (format!("Is {symbol} still used anywhere?"), t)
        }
        Profile::DiscoveryRead { matching } => {
            let target = if matching {
                dir.rsplit('/').next().unwrap_or(dir).to_string()
            } else {
                "project".to_string()
            };
            let mut t = vec![
                call("discovery", target, 0.50).with("factors", 2),
                read(format!("src/{dir}"), d.int(2, 5), 2, 0.75),
            ];
            t.extend(usual_recovery(d, symbol, &header));
            (format!("What does the {dir} module own?"), t)
        }
        Profile::WeakBuild => {
            let t = vec![
                search(d, "find", &format!("{symbol}Options"), 0.10),
                read("cmake".to_string(), d.int(6, 12), 0, 0.70),
                call("cmake", snake(symbol), 0.95).with("passed", true),
                search(d, "grep", symbol, 0.80).recovery(1),
                read(header, 1, 1, 0.55).recovery(1),
            ];
            (format!("Which build option turns {symbol} on?"), t)
        }
        Profile::WeakBroad => {
            let t = vec![
                call("discovery", "project", 0.25).with("factors", 1),
                read("docs".to_string(), d.int(6, 12), 6, 0.85),
                read("src".to_string(), d.int(6, 12), 6, 0.85),
                read("docs/architecture.md".to_string(), 1, 1, 0.55),
                search(d, "grep", symbol, 0.10).recovery(1),
                search(d, "find", symbol, 0.60).recovery(2),
                read(header.clone(), 1, 1, 0.55).recovery(3),
                read(source, 1, 1, 0.55).recovery(4),
            ];
            (format!("Why does {symbol} exist at all?"), t)
        }
        Profile::Error => (
            format!("Summarize every change to {symbol} this year"),
            Vec::new(),
        ),
    }
}

pub const EXPERIMENT: &str = include_str!("capacity-50.toml");

/// The sequential live example's experiment (`corpora/capacity-live`).
pub const EXPERIMENT_LIVE: &str = include_str!("capacity-live.toml");

/// The sequential example's experiment (`corpora/capacity-400`).
pub const EXPERIMENT_400: &str = include_str!("capacity-400.toml");

/// One query of `profile` on a symbol drawn from `d`, as a JSON line.
fn query_line(d: &mut Draw, id: &str, profile: Profile) -> String {
    let (symbol, dir) = d.pick(&SYMBOLS);
    let (query, tools) = trace(d, profile, symbol, dir);
    let mut o = Map::new();
    o.insert("query_id".into(), json!(id));
    o.insert("query".into(), json!(query));
    let right = profile != Profile::Error;
    o.insert("first_pass_correct".into(), json!(right));
    o.insert("correct".into(), json!(right));
    if !right {
        o.insert(
            "error".into(),
            json!("planner returned no tool plan (context overflow)"),
        );
    }
    o.insert(
        "tools".into(),
        Value::Array(tools.iter().map(Call::to_json).collect()),
    );
    Value::Object(o).to_string()
}

/// `count` queries with the capacity review's profiles in its proportions, drawn at random
/// from `seed`, one JSON line each: the query-replay benchmark's corpus.
pub fn many(seed: u64, count: usize, mut emit: impl FnMut(String)) {
    let mut d = Draw::new(seed, 4);
    let weighted: Vec<(Profile, f64)> = PLAN.iter().map(|&(p, n)| (p, n as f64)).collect();
    for i in 0..count {
        let profile = d.weighted(&weighted);
        emit(query_line(&mut d, &format!("q{:06}", i + 1), profile));
    }
}

/// `experiment.toml` and `queries.jsonl` of the capacity review.
pub fn capacity(seed: u64) -> Files {
    let mut d = Draw::new(seed, 3);
    let mut profiles: Vec<Profile> = PLAN
        .iter()
        .flat_map(|&(p, n)| std::iter::repeat_n(p, n))
        .collect();
    // Fisher–Yates, so the profiles are interleaved as a real review's would be.
    for i in (1..profiles.len()).rev() {
        let j = d.int(0, i as i64) as usize;
        profiles.swap(i, j);
    }
    let out = profiles
        .iter()
        .enumerate()
        .map(|(i, &profile)| query_line(&mut d, &format!("q{:02}", i + 1), profile))
        .collect();
    vec![
        ("experiment.toml".into(), EXPERIMENT.to_string()),
        (File::Queries.name().into(), lines(out)),
    ]
}

/// `experiment.toml` and `queries.jsonl` of the sequential example: 400 queries drawn as the
/// query benchmark's are ([`many`]), with the capacity review's models.
pub fn capacity_400(seed: u64) -> Files {
    let mut out = Vec::new();
    many(seed ^ 400, 400, |line| out.push(line));
    let mut text = out.join("\n");
    text.push('\n');
    vec![
        ("experiment.toml".into(), EXPERIMENT_400.to_string()),
        (File::Queries.name().into(), text),
    ]
}

/// The sequential live example's experiment and its 120 query files, each the trace the fake
/// agent (`corpora/capacity-live/agent.sh`) answers with: drawn as [`many`] draws them, with
/// what answering cost ([`spent`]).
pub fn capacity_live(seed: u64) -> Files {
    let mut out = vec![("experiment.toml".to_string(), EXPERIMENT_LIVE.to_string())];
    let mut i = 0;
    many(seed ^ 0x11FE, 120, |line| {
        i += 1;
        out.push((format!("queries/q{i:06}.json"), spent(&line) + "\n"));
    });
    out
}

/// A trace with what its agent spent, as an agent harness that times its model calls reports
/// it: each tool call is a model turn that reads the context so far (which grows by what the
/// tool returned) and writes its next step; about 14 ms per token written and 1 per 20 read.
fn spent(line: &str) -> String {
    let mut o: Map<String, Value> = serde_json::from_str(line).expect("a generated trace");
    let turns = o["tools"].as_array().map_or(0, Vec::len) as u64 + 1;
    let (mut input, mut context) = (0u64, 1_800u64);
    for _ in 0..turns {
        input += context;
        context += 650;
    }
    let output = 120 * turns;
    let cost = (input as f64 * 0.000003 + output as f64 * 0.000015) * 1e6;
    o.insert(
        "usage".into(),
        json!({"input_tokens": input, "output_tokens": output, "cost_usd": cost.round() / 1e6}),
    );
    o.insert(
        "elapsed_ms".into(),
        json!(turns * 400 + input / 20 + 14 * output),
    );
    Value::Object(o).to_string()
}
