//! A large document-review corpus for the replay benchmark (`benches/bench.sh`), from a fixed
//! seed: `cargo run --release --example generate_large_reviews -- FINDINGS OUT_DIR [long]
//! [interleaved]`. With `long`, titles and sections read like a reviewer's (about 90 and 40
//! characters) instead of "Issue 3 of plan 7" and "Section 3". With `interleaved`, the layout
//! of the performance bars: returns of about 2.3 findings each (433,440 returns for a million
//! findings), their lines shuffled within windows of 200 targets, as concurrent collection and
//! concatenated shards leave them.
//!
//! Targets of 30 latent issues are reviewed by 7 personas in 3 runs per arm; each persona files
//! each issue with some probability, so findings merge and corroborate as in the example corpus.
//! Lines are streamed to disk, so generating a million findings needs little memory.

use std::io::{BufWriter, Write};

use calibench::stats::rng::Rng;

const PERSONAS: [&str; 7] = [
    "coherence",
    "feasibility",
    "product-lens",
    "design-lens",
    "security-lens",
    "scope-guardian",
    "adversarial-document",
];
const ANCHORS: [u32; 3] = [50, 75, 100];
const FLOATS: [f64; 9] = [0.45, 0.5, 0.55, 0.6, 0.65, 0.72, 0.8, 0.85, 0.9];

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = || {
        std::io::Error::other("usage: generate_large_reviews FINDINGS OUT_DIR [long] [interleaved]")
    };
    let total: u64 = args.next().and_then(|a| a.parse().ok()).ok_or_else(usage)?;
    let out = std::path::PathBuf::from(args.next().ok_or_else(usage)?);
    let flags: Vec<String> = args.collect();
    if flags.iter().any(|f| f != "long" && f != "interleaved") {
        return Err(usage());
    }
    let long = flags.iter().any(|f| f == "long");
    let interleaved = flags.iter().any(|f| f == "interleaved");
    // How often a persona files an issue of its own lens, and one of another's.
    let (mine_p, other_p) = if interleaved {
        (0.35, 0.0315)
    } else {
        (0.7, 0.12)
    };
    const WINDOW: u64 = 200;
    std::fs::create_dir_all(&out)?;
    std::fs::write(
        out.join("experiment.toml"),
        "name = \"large-doc-review\"\nmode = \"doc\"\nseed = 20260421\nbootstrap = 0\n\n\
         [arms.baseline]\nsource = \"baseline\"\n[arms.baseline.review]\npolicy = \"float-gates\"\n\n\
         [arms.treatment]\nsource = \"treatment\"\n[arms.treatment.review]\npolicy = \"anchored\"\n",
    )?;
    let mut w = BufWriter::new(std::fs::File::create(out.join("reviews.jsonl"))?);
    let mut rng = Rng::for_replicate(20260421, 7);
    let mut shuffle = Rng::for_replicate(20260421, 8);
    let mut window: Vec<String> = Vec::new();
    let mut written = 0u64;
    let mut target = 0u64;
    while written < total {
        for (arm, anchored) in [("baseline", false), ("treatment", true)] {
            for run in 0..3 {
                for (p, persona) in PERSONAS.iter().enumerate() {
                    let mut findings = Vec::new();
                    for issue in 0..30u64 {
                        let mine = issue % 7 == p as u64;
                        if rng.unit_f64() >= if mine { mine_p } else { other_p } || written >= total
                        {
                            continue;
                        }
                        let conf = if anchored {
                            ANCHORS[rng.below(3) as usize].to_string()
                        } else {
                            FLOATS[rng.below(9) as usize].to_string()
                        };
                        let sev = ["P0", "P1", "P2", "P3"][(issue % 4) as usize];
                        let (title, section) = if long {
                            (
                                format!("Issue {issue} of plan {target}: the rollback step does not say who approves a schema change"),
                                format!("Section {}: Migration, rollback and ownership", issue % 8),
                            )
                        } else {
                            (
                                format!("Issue {issue} of plan {target}"),
                                format!("Section {}", issue % 8),
                            )
                        };
                        findings.push(format!(
                            r#"{{"id":"{arm}-{target}-{run}-{persona}-{issue}","title":"{title}","severity":"{sev}","section":"{section}","finding_type":"omission","autofix_class":"manual","confidence":{conf}}}"#
                        ));
                        written += 1;
                    }
                    let line = format!(
                        r#"{{"target":"plan-{target}","arm":"{arm}","run":{run},"reviewer":"{persona}","findings":[{}]}}"#,
                        findings.join(",")
                    );
                    if interleaved {
                        window.push(line);
                    } else {
                        writeln!(w, "{line}")?;
                    }
                }
            }
        }
        target += 1;
        if interleaved && (target % WINDOW == 0 || written >= total) {
            // Fisher–Yates over the window's lines.
            for i in (1..window.len()).rev() {
                window.swap(i, shuffle.below(i as u64 + 1) as usize);
            }
            for line in window.drain(..) {
                writeln!(w, "{line}")?;
            }
        }
    }
    w.flush()?;
    eprintln!(
        "wrote {written} findings over {target} targets to {}",
        out.display()
    );
    Ok(())
}
