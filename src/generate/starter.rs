//! The starter corpus `calibench init` writes: for each kind, a commented `experiment.toml`
//! that shows every key with its default, and a few example lines made by fixed rules (no
//! randomness), which run as written. `docs/reference.md` quotes a line of each.

use crate::corpus::files::File;
use serde_json::{json, Value};

/// The kinds of corpus `init` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InitKind {
    /// Reviewer returns on documents, with judge verdicts: an A/B of a rubric change
    Doc,
    /// Reviewer returns on code changes, with judge verdicts
    Code,
    /// Agent query traces: a capacity review of a confidence model
    Queries,
    /// Imported eval scores of two runs
    Scores,
}

/// What `init` says it made.
pub fn kind_name(kind: InitKind) -> &'static str {
    match kind {
        InitKind::Doc => "doc-review",
        InitKind::Code => "code-review",
        InitKind::Queries => "query-trace",
        InitKind::Scores => "imported-scores",
    }
}

/// The files of a new corpus of `kind`: its experiment and its example lines. Pure.
pub fn files(kind: InitKind) -> Vec<(String, String)> {
    let lines = |values: Vec<Value>| -> String {
        values.iter().map(|v| format!("{v}\n")).collect::<String>()
    };
    match kind {
        InitKind::Doc | InitKind::Code => {
            let (reviews, verdicts) = review_lines(kind == InitKind::Code);
            vec![
                ("experiment.toml".into(), experiment(kind)),
                (File::Reviews.name().into(), lines(reviews)),
                (File::Verdicts.name().into(), lines(verdicts)),
            ]
        }
        InitKind::Queries => vec![
            ("experiment.toml".into(), experiment(kind)),
            (File::Queries.name().into(), lines(query_lines())),
        ],
        InitKind::Scores => vec![
            ("experiment.toml".into(), experiment(kind)),
            (File::Scores.name().into(), lines(score_lines())),
        ],
    }
}

/// What the example findings say: title, section (doc) or file (code), severity.
const ISSUES: [(&str, &str, &str, &str); 6] = [
    (
        "Rollback path is unspecified",
        "Deploy",
        "src/deploy/rollback.rs",
        "P1",
    ),
    (
        "Load estimate is missing",
        "Capacity",
        "src/capacity/estimate.rs",
        "P2",
    ),
    ("Migration has no owner", "Plan", "src/migrate/mod.rs", "P2"),
    (
        "Success metric is not measurable",
        "Goals",
        "src/metrics/success.rs",
        "P3",
    ),
    (
        "Retry loop never backs off",
        "Design",
        "src/net/retry.rs",
        "P1",
    ),
    (
        "Error path is untested",
        "Testing",
        "src/net/error.rs",
        "P2",
    ),
];

/// The example returns and their judges' verdicts: eight targets, two reviewers, two arms. The
/// baseline writes float confidences; the treatment the anchors 0/25/50/75/100. Two reviewers
/// file the same issue on some targets (so findings merge and corroborate), and three judges
/// score every finding on `real` and `important`, mostly agreeing.
fn review_lines(code: bool) -> (Vec<Value>, Vec<Value>) {
    const FLOATS: [f64; 6] = [0.62, 0.71, 0.55, 0.83, 0.48, 0.9];
    const ANCHORS: [u32; 6] = [50, 75, 75, 100, 25, 50];
    let mut reviews = Vec::new();
    let mut verdicts = Vec::new();
    for (arm, anchored) in [("baseline", false), ("treatment", true)] {
        for t in 0..8usize {
            let target = if code {
                format!("pr-{}", 100 + t)
            } else {
                format!("plan-{}", (b'a' + t as u8) as char)
            };
            // The whole target judged in each arm: the item the lift pairs across arms.
            let whole: f64 = if anchored { 0.75 } else { 0.5 };
            let judges: Vec<Value> = ["judge-a", "judge-b", "judge-c"]
                .iter()
                .enumerate()
                .map(|(n, model)| {
                    let real = if (t + n) % 3 == 0 {
                        whole + 0.25
                    } else {
                        whole
                    };
                    json!({"model": model, "per_dimension": {"real": real, "important": whole}})
                })
                .collect();
            verdicts.push(json!({"item_id": target, "arm": arm, "verdicts": judges}));
            for (r, reviewer) in ["correctness", "feasibility"].iter().enumerate() {
                let reviewer = if code && r == 1 { "security" } else { reviewer };
                let findings: Vec<Value> = (0..2)
                    .map(|k| {
                        // Reviewer 0 files issues t and t+1; reviewer 1 files t+1 and t+2: the
                        // shared one merges and is corroborated.
                        let i = (t + r + k) % ISSUES.len();
                        let (title, section, file, severity) = ISSUES[i];
                        let j = (t + 2 * r + k) % 6;
                        let confidence = if anchored {
                            json!(ANCHORS[j])
                        } else {
                            json!(FLOATS[j])
                        };
                        let id = format!("{arm}-{target}-{reviewer}-{k}");
                        let mut f = json!({"id": id, "title": title, "severity": severity,
                                           "autofix_class": if k == 0 { "manual" } else { "safe_auto" },
                                           "confidence": confidence,
                                           "suggested_fix": if k == 0 { Value::Null } else { json!("Add the missing step.") }});
                        if code {
                            f["file"] = json!(file);
                            f["line"] = json!(10 + 7 * i);
                            f["owner"] = json!("review-fixer");
                            f["requires_verification"] = json!(false);
                            f["pre_existing"] = json!(false);
                        } else {
                            f["section"] = json!(section);
                            f["finding_type"] = json!(if k == 0 { "omission" } else { "error" });
                        }
                        // Judges: a finding scores what it is worth, in either arm (a judge
                        // scoring the same finding higher in one arm is a bias the audit
                        // withholds for). The anchors track worth — 75 and 100 go to the
                        // findings worth more — and the float gates less so, so the anchored
                        // arm surfaces the better ones. The three judges differ by at most a
                        // quarter.
                        let base: f64 = if matches!(j, 1..=3) { 0.75 } else { 0.5 };
                        let judges: Vec<Value> = ["judge-a", "judge-b", "judge-c"]
                            .iter()
                            .enumerate()
                            .map(|(n, model)| {
                                let real = if (i + n) % 3 == 0 { base + 0.25 } else { base };
                                json!({"model": model, "per_dimension": {"real": real, "important": base}})
                            })
                            .collect();
                        verdicts.push(json!({"item_id": id, "arm": arm, "verdicts": judges}));
                        f
                    })
                    .collect();
                reviews.push(json!({"target": target, "arm": arm, "reviewer": reviewer, "findings": findings}));
            }
        }
    }
    (reviews, verdicts)
}

/// Twelve recorded agent queries: searches and reads, some with a recovery phase, each with
/// whether the first and the final answers were right.
fn query_lines() -> Vec<Value> {
    (0..12usize)
        .map(|q| {
            let name = format!("Widget{q}");
            let hits = [0, 2, 6, 14][q % 4];
            let files = [0, 1, 3, 6][(q + 1) % 4];
            let mut tools = vec![
                json!({"tool": "grep", "target": name, "hits": hits}),
                json!({"tool": "read", "target": format!("src/{name}.rs"), "files": files, "relevant": files.min(2)}),
            ];
            if q % 3 == 0 {
                tools.push(json!({"tool": "references", "target": name, "hits": 3, "phase": "recovery", "attempt": 1}));
            }
            let first = q % 4 != 0;
            json!({"query_id": format!("q{:02}", q + 1), "query": format!("Where is {name} defined?"),
                   "first_pass_correct": first, "correct": first || q % 3 == 0, "tools": tools})
        })
        .collect()
}

/// Two imported runs of one task, twenty items, one 0/1 scorer: the shape `calibench import`
/// writes.
fn score_lines() -> Vec<Value> {
    let mut out = Vec::new();
    for (arm, right) in [("v1", 12usize), ("v2", 16)] {
        for item in 1..=20usize {
            let score = if (item * 7) % 20 < right { 1.0 } else { 0.0 };
            out.push(json!({"arm": arm, "task": "my-task", "item": item, "repeat": 1,
                            "scorer": "accuracy", "score": score, "source": format!("{arm}.csv:{}", item + 1)}));
        }
    }
    out
}

const TRUST_AND_GATE: &str = r#"
# The trust verdict: do the judges agree enough for judge-derived figures (precision, the lift)
# to be believed? Each check that fails withholds them, with its reason.
[trust]
irr_floor = 0.2             # Krippendorff's α among the judges must reach this (his own guideline: 0.667 tentative, 0.8 reliable)
spread_ceiling = 0.5        # no item's judges may differ by more than this on any dimension
min_survivors = 3           # judges that must answer every item (a failed judge is dropped, never 0)
level = "interval"          # α's level of measurement: nominal, ordinal, interval or ratio
dimension_weights = {}      # weights of the judges' dimensions in the composite; empty = equal
alt_test = "report"         # with labels.jsonl (human labels): "report" the alt-test, or "require" the panel to pass it
alt_test_epsilon = 0.2      # how much worse than an annotator a judge may be: 0.2 experts, 0.15 skilled, 0.1 crowd
bias = "withhold"           # a failed bias-audit check (docs/guides/trust.md): "withhold" the judges' figures, "warn" (a caveat), or "off"

# The CI gate (`calibench gate DIR`): uncomment to fail a build when a change moves the figures.
# `calibench accept runs/<run-id> --to accepted` stores the accepted run the relative bounds use.
# [gate]
# require_trustworthy = true        # fail unless the judges are trusted
# require_decision = "better"       # fail unless the decision is this (or a list of verdicts)
# allow_caveats = false             # let require_decision pass a decision whose inputs carry caveats
# baseline = "accepted/metrics.json"
# [[gate.check]]
# name = "judges agree"             # how the check is named in the output (default: the metric)
# metric = "agreement.judges.alpha" # a path into metrics.json: `calibench gate --list-metrics`
# min = 0.667                       # also: max; max_increase and max_decrease (against baseline)
# baseline = "accepted/metrics.json"  # this check's own accepted run

# Live collection (`calibench collect`): record a corpus by running your reviewers. See
# docs/guides/live-collection.md for every key.
# [collect]
# command = ["./review.sh", "{reviewer}", "{target}", "{arm}", "{run}"]
# reviewers = ["correctness", "security"]
# targets = "docs/*.md"
# kind = "reviews"        # or "queries"
# runs = 1
# concurrency = 4
# timeout_s = 300
# retries = 1
# backoff_s = 1
# provenance_env = []     # environment variables recorded per arm (hashed when named *KEY*, *TOKEN*, *SECRET*)
# [collect.validators]    # command, concurrency, timeout_s, retries, backoff_s
# [collect.judges]        # command, judges, items, dimensions, concurrency, timeout_s, retries, backoff_s

# Which threshold should ship? Each [[sweep]] is made beside the run (`calibench sweep` runs one
# from the command line). See docs/guides/threshold-sweep.md.
# [[sweep]]
# arm = "treatment"                                     # baseline or treatment
# vary = { "review.actionable_from" = "25,50,75,100" }  # a comma list or "START:STOP:STEP"
# require = ["precision>=0.6"]      # met when the 95% interval's unsafe bound reaches it
# prefer = "max:actionable"         # or min:METRIC, among the points that meet every requirement
# holdout = 0.5                     # share of targets held out to check the choice
# confirm_at = 0.5                  # judge composite from which a finding counts as confirmed (recall)
# frontier = "cost_usd:precision"   # mark the points no other beats on both (cost needs usage)
"#;

const REVIEW_TOP: &str = r#"# An A/B of a rubric change: the same recorded reviews (or two recorded versions) replayed
# through a baseline and a treatment policy. Every key is shown with its default; the ones not
# commented out are what this example sets. `calibench run .` runs it; the report's first line
# is the decision.
name = "my-review"          # names the run and its report (default: the folder's name)
corpus = "."                # the corpus folder, relative to this file
seed = 20260421             # seeds every bootstrap: same seed, same intervals
bootstrap = 2000            # bootstrap replicates for every 95% interval (at most 1000000)
# primary = ["precision"]   # metrics that lead the headline and form one Holm family
# ignore_labels = []       # recorded `arm` labels of other arms: counted in the ledger, never read
# noise_floor = "runs/my-aa" # an A/A run of this baseline (run --aa): each decision metric shows the harness's noise
MODE_LINE

# What "better" means: each metric with increase, decrease (must move that way, significantly)
# or no-decrease, no-increase (must not move the other way). The report opens with the answer:
# better, worse, inconclusive (with what a bigger A/B would need) or withheld. A guard takes a
# margin it must be shown to stay within; a metric that must move, the smallest change that
# matters, for which "needs ≈ N" sizes the next A/B.
[decision]
precision = { want = "increase", min_effect = 0.05 }
distinct_values = "decrease"
"#;

const DOC_EXPERIMENT_ARMS: &str = r#"
[arms.baseline]
source = "baseline"         # the `arm` label of the lines this arm reads (default: the arm's name)
[arms.baseline.review]
policy = "float-gates"      # float-gates: per-severity gates on float confidence
# scale = "float"           # float (0..1) or anchor (0/25/50/75/100); default by policy
# gates = { P0 = 0.5, P1 = 0.6, P2 = 0.65, P3 = 0.75 }   # doc: actionable at or above
# fyi_floor = 0.4           # manual findings from here up to the gate are FYI
# boost = 0.1               # a corroborated finding's raise
# auto_apply_from = 0.85    # safe_auto findings with a fix from here are auto-applied
# promotion = true          # raise corroborated findings

[arms.treatment]
source = "treatment"
# differs = []             # what it changes besides its policy: model, command, files, calibench, env.NAME (docs/guides/live-collection.md)
[arms.treatment.review]
policy = "anchored"         # anchored: the 0/25/50/75/100 rubric
# scale = "anchor"
# surface_from = 50         # below: dropped
# actionable_from = 75      # from here: actionable; between: FYI
# p0_escape = 50            # a P0 at or above this surfaces as actionable (default: none in doc mode)
# collapse = true           # same-persona collapse of three or more findings on one premise
# promotion = true          # corroborated findings go one anchor up
"#;

const CODE_EXPERIMENT_ARMS: &str = r#"
[arms.baseline]
source = "baseline"         # the `arm` label of the lines this arm reads (default: the arm's name)
[arms.baseline.review]
policy = "float-gates"
# scale = "float"
# gate = 0.6                # code: findings at or above surface
# p0_gate = 0.5             # a P0 at or above surfaces
# boost = 0.1
# auto_apply_from = 0.85
# promotion = true
# review_mode = "interactive"   # interactive, report-only, headless or autofix
# demote_reviewers = ["testing", "maintainability"]

[arms.treatment]
source = "treatment"
# differs = []             # what it changes besides its policy: model, command, files, calibench, env.NAME (docs/guides/live-collection.md)
[arms.treatment.review]
policy = "anchored"
# scale = "anchor"
# surface_from = 75
# actionable_from = 75
# p0_escape = 50
# collapse = true
# promotion = true
# review_mode = "interactive"
# demote_reviewers = ["testing", "maintainability"]
# The precision controls (docs/guides/ab-rubric-change.md), off by default:
# validation = "never"          # never, auto or always: the validator pass (validations.jsonl)
# validation_budget = 15        # findings validated per target at most
# route = "walk-through"        # interactive routing: walk-through, best-judgment, file-tickets, report-only
# skip = []                     # PR skip rules: closed, draft, trivial-pattern, trivial-judgment, reviewed
# lint_ignore = "off"           # off, or suppress (needs sources/<target>/<file>)
"#;

/// The commented `experiment.toml` of a new corpus of `kind`.
/// Every kind's `[sequential]` table, commented out.
const SEQUENTIAL: &str = r#"
# Decide sequentially too (`calibench run --sequential`): anytime-valid bounds after every unit,
# the unit at which the decision was reached. See docs/guides/stop-when-you-know.md.
# [sequential]
# always = false                    # every run decides sequentially, as --sequential does
# method = "hedged"                 # hedged (betting, the default) or empirical-bernstein
# range = { accuracy = [0, 1] }     # per-unit range of a decision metric the catalogue cannot bound
"#;

pub fn experiment(kind: InitKind) -> String {
    let review = |mode: &str, arms: &str| {
        format!(
            "# Made by `calibench init --kind {mode}`.\n{}{arms}{TRUST_AND_GATE}{SEQUENTIAL}",
            REVIEW_TOP.replace(
                "MODE_LINE",
                &format!("mode = \"{mode}\"               # how reviews.jsonl's findings read: doc (section) or code (file, line); required with reviews"),
            )
        )
    };
    match kind {
        InitKind::Doc => review("doc", DOC_EXPERIMENT_ARMS),
        InitKind::Code => review("code", CODE_EXPERIMENT_ARMS),
        InitKind::Queries => {
            format!("# Made by `calibench init --kind queries`.\n{QUERIES_EXPERIMENT}{SEQUENTIAL}")
        }
        InitKind::Scores => {
            format!("# Made by `calibench init --kind scores`.\n{SCORES_EXPERIMENT}{SEQUENTIAL}")
        }
    }
}

const QUERIES_EXPERIMENT: &str = r#"# A capacity review of an agent's confidence model: the recorded query traces replayed through
# two models of confidence, each with its recovery gate. Every key is shown with its default;
# the ones not commented out are what this example sets. `calibench run .` runs it.
name = "my-agent"           # names the run and its report (default: the folder's name)
corpus = "."                # the corpus folder, relative to this file
seed = 20260421             # seeds every bootstrap
bootstrap = 2000            # bootstrap replicates for every 95% interval
# primary = ["final_accuracy"]
# ignore_labels = []       # recorded `arm` labels of other arms: counted in the ledger, never read
# noise_floor = "runs/my-aa" # an A/A run of this baseline (run --aa): each decision metric shows the harness's noise

# What "better" means: fewer needless recoveries, and no loss of accuracy on the way. A guard
# with a margin holds only when its 95% interval shows it stays within the margin; without one
# it never blocks "better", but is not shown to hold. min_effect sizes "needs ≈ N" for the
# smallest change that matters: unnecessary_recovery_rate = { want = "decrease", min_effect = 0.1 }.
[decision]
unnecessary_recovery_rate = "decrease"
final_accuracy = { want = "no-decrease", margin = 0.02 }

[arms.baseline]
source = "recorded"         # the `arm` label of the traces (default "recorded" when they have none)
[arms.baseline.confidence]
policy = "flat-mean"        # the mean of the tools' scores
recovery_threshold = 0.7    # below this the recovery gate fires
# stop_threshold = 0.2      # below this the query stops, with no recovery
# recovery_entry_score = 0.5  # what each recovery attempt adds
# bands = { strong = 0.75, adequate = 0.55, weak = 0.25 }   # confidence bands in the report

[arms.treatment]
source = "recorded"         # both arms may read the same recorded traces
# differs = []             # what it changes besides its policy: model, command, files, calibench, env.NAME (docs/guides/live-collection.md)
[arms.treatment.confidence]
policy = "category-max"     # the best evidence per category, weighted, with a convergence bonus
recovery_threshold = 0.5
# stop_threshold = 0.2
# weights = { read = 3.0, search = 2.5, verification = 1.5, discovery = 1.0, git = 1.0, ci = 1.0, other = 0.5 }
# normalize = "present"     # divide by the weights of the categories present, or "all"
# bonus_mode = "multiplicative"   # or "additive"
# bonus_two = 0.1           # two categories confirming one target
# bonus_three = 0.2         # three or more
# bonus_search_read = 0.05  # search and read confirming a common target
# bands = { strong = 0.75, adequate = 0.55, weak = 0.25 }

# Which recovery gate should ship? Each [[sweep]] is made beside the run (`calibench sweep`
# runs one from the command line). See docs/guides/threshold-sweep.md.
# [[sweep]]
# arm = "treatment"                 # baseline or treatment
# vary = { "confidence.recovery_threshold" = "0.30:0.80:0.05" }  # or a comma list
# require = ["unnecessary_recovery_rate<=0.2", "final_accuracy>=0.9"]
# prefer = "max:final_accuracy"     # or min:METRIC, among the points that meet every requirement
# holdout = 0.5                     # share of queries held out to check the choice
# confirm_at = 0.5                  # (review sweeps: the composite that confirms a finding)
# frontier = "unnecessary_recovery_rate:final_accuracy"  # the points no other beats on both

# A CI gate is optional here too: see `calibench init --kind doc` for the [gate] table.
"#;

const SCORES_EXPERIMENT: &str = r#"# Two imported runs compared per scorer: `calibench import` wrote scores.jsonl (here, example
# lines of two runs, v1 and v2). Every key is shown with its default. `calibench run .` runs it.
name = "my-eval"            # names the run and its report (default: the folder's name)
corpus = "."                # the corpus folder, relative to this file
seed = 20260421             # seeds every bootstrap
bootstrap = 2000            # bootstrap replicates for every 95% interval
# ignore_labels = []       # recorded `arm` labels of other arms: counted in the ledger, never read
# noise_floor = "runs/my-aa" # an A/A run of this baseline (run --aa): each decision metric shows the harness's noise

# What "better" means: the scorer, by its name as the log wrote it.
[decision]
accuracy = "increase"

[arms.baseline]
source = "v1"               # an --arm given to calibench import
[arms.treatment]
source = "v2"
# differs = []             # what it changes besides its policy: model, command, files, calibench, env.NAME (docs/guides/live-collection.md)

# The scorers that are judges (LLM graders scoring in [0, 1]): the trust verdict checks them,
# and withholds their figures when they disagree. Default: none.
[scores]
judges = []

# [trust], [gate] and [collect] work as for review corpora: see `calibench init --kind doc`.
"#;
