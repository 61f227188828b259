//! Which shard of a plan this machine collects (docs/guides/live-collection.md, "Shards"):
//! `--shard K/N` as written, or `--shard auto`, read from the index a scheduler gives each job
//! of an array. Pure: the environment is passed in as a function, so every scheduler's case is
//! tested without setting a variable.

/// Shard K of N: the targets whose SHA-256 of the name, mod N, is K − 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: u32,
    pub n: u32,
}

/// `--shard` as written: a fixed `K/N`, or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardSpec {
    Fixed(Shard),
    Auto,
}

impl std::str::FromStr for ShardSpec {
    type Err = String;

    /// `auto`, or `K/N` with 1 ≤ K ≤ N and N ≥ 2.
    fn from_str(text: &str) -> Result<Self, String> {
        if text.trim() == "auto" {
            return Ok(ShardSpec::Auto);
        }
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not K/N (shard K of N, such as 2/4) or auto"))?;
        let (k, n): (u32, u32) = match (k.trim().parse(), n.trim().parse()) {
            (Ok(k), Ok(n)) => (k, n),
            _ => return Err(format!("`{text}` is not K/N with whole numbers")),
        };
        Shard::new(k, n)
            .map(ShardSpec::Fixed)
            .map_err(|why| format!("`{text}`: {why}"))
    }
}

impl Shard {
    /// Shard `k` of `n`, or why not.
    pub fn new(k: u32, n: u32) -> Result<Shard, String> {
        if n < 2 || k < 1 || k > n {
            return Err("a shard is K of N with N ≥ 2 and 1 ≤ K ≤ N".into());
        }
        Ok(Shard { k, n })
    }
}

/// A scheduler that runs job arrays: where it puts a job's place in its array, and the array's
/// size when it says it.
struct Scheduler {
    /// The variable that holds the job's index.
    index: &'static str,
    /// What the scheduler's array is called.
    who: &'static str,
    /// The variable that holds the array's size, if the scheduler sets one; `--shards`, if
    /// given, must agree with it.
    count: Option<&'static str>,
    /// Where the user finds the array's size for `--shards`, said when nothing gives it (not
    /// for SLURM, whose count must be set).
    size_is: &'static str,
}

const SLURM: Scheduler = Scheduler {
    index: "SLURM_ARRAY_TASK_ID",
    who: "a SLURM job array",
    count: Some("SLURM_ARRAY_TASK_COUNT"),
    size_is: "",
};

const SCHEDULERS: [Scheduler; 3] = [
    Scheduler {
        index: "JOB_COMPLETION_INDEX",
        who: "a Kubernetes Indexed Job",
        count: None,
        size_is: ", the Job's completions",
    },
    SLURM,
    Scheduler {
        index: "AWS_BATCH_JOB_ARRAY_INDEX",
        who: "an AWS Batch array job",
        count: Some("AWS_BATCH_JOB_ARRAY_SIZE"),
        size_is:
            "; AWS_BATCH_JOB_ARRAY_SIZE, which AWS Batch sets in an array's child jobs, is not set",
    },
];

/// The shard `--shard auto` names, and the sentence that says where it came from
/// ("shard 3 of 8, from SLURM_ARRAY_TASK_ID=2 …"). `env` reads one variable; `shards` is
/// `--shards N`. Exactly one scheduler's index must be set:
///
/// - Kubernetes Indexed Job: `JOB_COMPLETION_INDEX` (from 0), the count from `--shards` (the
///   Job's `completions`);
/// - SLURM job array: `SLURM_ARRAY_TASK_ID`, counted from `SLURM_ARRAY_TASK_MIN` in steps of
///   `SLURM_ARRAY_TASK_STEP` (1 when unset), the count `SLURM_ARRAY_TASK_COUNT`, which must be
///   set;
/// - AWS Batch array job: `AWS_BATCH_JOB_ARRAY_INDEX` (from 0), the count
///   `AWS_BATCH_JOB_ARRAY_SIZE`, or `--shards` where it is not set.
///
/// `--shards`, if given, must agree with the count a scheduler sets.
pub fn auto(
    env: &dyn Fn(&str) -> Option<String>,
    shards: Option<u32>,
) -> Result<(Shard, String), String> {
    let set: Vec<(&Scheduler, String)> = SCHEDULERS
        .iter()
        .filter_map(|s| Some((s, env(s.index)?)))
        .collect();
    let (scheduler, value) = match set.as_slice() {
        [] => {
            return Err(format!(
                "looked for {} and found none set: run it as a job of an array, or give the shard as --shard K/N",
                SCHEDULERS
                    .iter()
                    .map(|s| format!("{} ({})", s.index, s.who))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
        [(scheduler, value)] => (*scheduler, value),
        many => {
            return Err(format!(
                "found more than one scheduler's index set ({}): give the shard as --shard K/N",
                many.iter()
                    .map(|(s, v)| format!("{}={v}", s.index))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    };
    let number = |name: &str, text: &str| -> Result<u32, String> {
        text.trim()
            .parse::<u32>()
            .map_err(|_| format!("{name}={text} is not a whole number"))
    };
    let read = |name: &str| env(name).map(|v| number(name, &v)).transpose();
    let (var, who) = (scheduler.index, scheduler.who);
    let index = number(var, value)?;
    let count = match scheduler.count {
        Some(name) => read(name)?.map(|count| (name, count)),
        None => None,
    };
    // The array's size: the scheduler's own count, which --shards must agree with, or --shards.
    let size = match (count, shards) {
        (Some((name, count)), Some(s)) if s != count => {
            return Err(format!("--shards {s} disagrees with {name}={count}"))
        }
        (Some((_, count)), _) => Some(count),
        (None, shards) => shards,
    };
    // The job's place in the array (from 1), the array's size, and what they were read from.
    let (k, n, from) = if var == SLURM.index {
        let count = count.map(|(_, count)| count).ok_or_else(|| {
            "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not (an array job sets both)".to_string()
        })?;
        let min = read("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step_set = read("SLURM_ARRAY_TASK_STEP")?;
        let step = step_set.unwrap_or(1).max(1);
        // A task's shard is its place among evenly spaced tasks; a sparse array (`0-3,10`, or
        // failed tasks submitted again as `3,7`) gives each task a place that is not its shard.
        if let Some(max) = read("SLURM_ARRAY_TASK_MAX")? {
            let spanned =
                (max >= min && (max - min) % step == 0).then(|| u64::from((max - min) / step) + 1);
            if spanned != Some(u64::from(count)) {
                let tasks = spanned.map_or("no tasks".to_string(), |t| format!("{t} tasks"));
                let step = match step_set {
                    Some(set) => format!(", SLURM_ARRAY_TASK_STEP={set}"),
                    None => " (in steps of 1: SLURM_ARRAY_TASK_STEP is not set)".to_string(),
                };
                return Err(format!(
                    "SLURM_ARRAY_TASK_MIN={min}, SLURM_ARRAY_TASK_MAX={max}{step} make {tasks}, not SLURM_ARRAY_TASK_COUNT={count}: a sparse array (such as --array=0-3,10, or failed tasks submitted again) cannot say which shard a task is; give each task its shard as --shard K/N (a failed task's run continues with --resume RUN_ID --shard K/N)"
                ));
            }
        }
        if index < min || (index - min) % step != 0 {
            return Err(format!(
                "SLURM_ARRAY_TASK_ID={index} is not one of the array's tasks (from {min} in steps of {step})"
            ));
        }
        let from = format!(
            "SLURM_ARRAY_TASK_ID={index}, SLURM_ARRAY_TASK_MIN={min}, SLURM_ARRAY_TASK_COUNT={count}"
        );
        ((index - min) / step + 1, count, from)
    } else {
        let n = size.ok_or_else(|| {
            format!(
                "{var}={index} gives this job's index in {who}, but not how many jobs there are: pass --shards N (the array's size{})",
                scheduler.size_is
            )
        })?;
        let said = match count {
            Some((name, _)) => format!("{name}={n}"),
            None => format!("--shards {n}"),
        };
        (index + 1, n, format!("{var}={index}, {said}"))
    };
    let shard =
        Shard::new(k, n).map_err(|why| format!("{from} makes shard {k} of {n}, and {why}"))?;
    Ok((shard, format!("shard {k} of {n}, from {from} ({who})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn each_scheduler_gives_its_shard() {
        // Kubernetes: index 0 of 4 completions is shard 1/4.
        let (s, said) = auto(&env(&[("JOB_COMPLETION_INDEX", "0")]), Some(4)).unwrap();
        assert_eq!(s, Shard { k: 1, n: 4 });
        assert!(said.contains("JOB_COMPLETION_INDEX=0") && said.contains("Kubernetes"));
        // SLURM `--array=1-8`: task 3 of tasks 1..8 is shard 3/8.
        let slurm = [
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ];
        assert_eq!(auto(&env(&slurm), None).unwrap().0, Shard { k: 3, n: 8 });
        assert_eq!(auto(&env(&slurm), Some(8)).unwrap().0, Shard { k: 3, n: 8 });
        // `--array=0-6:2` (0, 2, 4, 6): task 4 is the third, with the array's last task named
        // or not.
        let stepped = [
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MAX", "6"),
        ];
        assert_eq!(auto(&env(&stepped), None).unwrap().0, Shard { k: 3, n: 4 });
        assert_eq!(
            auto(&env(&stepped[..4]), None).unwrap().0,
            Shard { k: 3, n: 4 }
        );
        // AWS Batch: index 9 of 10, the size from --shards, or from the array's own
        // AWS_BATCH_JOB_ARRAY_SIZE (which --shards, if given, must agree with).
        let (s, _) = auto(&env(&[("AWS_BATCH_JOB_ARRAY_INDEX", "9")]), Some(10)).unwrap();
        assert_eq!(s, Shard { k: 10, n: 10 });
        let batch = [
            ("AWS_BATCH_JOB_ARRAY_INDEX", "9"),
            ("AWS_BATCH_JOB_ARRAY_SIZE", "10"),
        ];
        for shards in [None, Some(10)] {
            let (s, said) = auto(&env(&batch), shards).unwrap();
            assert_eq!(s, Shard { k: 10, n: 10 });
            assert!(said.contains("AWS_BATCH_JOB_ARRAY_SIZE=10"), "{said}");
        }
    }

    /// Variables set, `--shards`, and what the refusal must say.
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<u32>, &'a str);

    #[test]
    fn what_cannot_be_a_shard_is_refused_naming_what_was_read() {
        let cases: [Case; 12] = [
            (&[], None, "looked for JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), SLURM_ARRAY_TASK_ID (a SLURM job array), AWS_BATCH_JOB_ARRAY_INDEX (an AWS Batch array job) and found none set"),
            (&[("JOB_COMPLETION_INDEX", "2")], None, "pass --shards N (the array's size, the Job's completions)"),
            (&[("AWS_BATCH_JOB_ARRAY_INDEX", "4")], Some(4), "AWS_BATCH_JOB_ARRAY_INDEX=4, --shards 4 makes shard 5 of 4"),
            (&[("JOB_COMPLETION_INDEX", "x1")], Some(4), "JOB_COMPLETION_INDEX=x1 is not a whole number"),
            (&[("SLURM_ARRAY_TASK_ID", "2")], None, "SLURM_ARRAY_TASK_COUNT is not"),
            (&[("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_COUNT", "4")], Some(5), "--shards 5 disagrees with SLURM_ARRAY_TASK_COUNT=4"),
            (&[("SLURM_ARRAY_TASK_ID", "3"), ("SLURM_ARRAY_TASK_STEP", "2"), ("SLURM_ARRAY_TASK_COUNT", "4")], None, "is not one of the array's tasks"),
            (&[("JOB_COMPLETION_INDEX", "0"), ("AWS_BATCH_JOB_ARRAY_INDEX", "0")], Some(2), "more than one scheduler's index set (JOB_COMPLETION_INDEX=0, AWS_BATCH_JOB_ARRAY_INDEX=0)"),
            // `--array=0-3,10`: five tasks from 0 to 10 are not evenly spaced, so task 2 is not
            // shard 3 of 5 (and task 10 would be none), and every task is refused alike.
            (&[("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_MIN", "0"), ("SLURM_ARRAY_TASK_MAX", "10"), ("SLURM_ARRAY_TASK_STEP", "1"), ("SLURM_ARRAY_TASK_COUNT", "5")], None, "SLURM_ARRAY_TASK_MIN=0, SLURM_ARRAY_TASK_MAX=10, SLURM_ARRAY_TASK_STEP=1 make 11 tasks, not SLURM_ARRAY_TASK_COUNT=5: a sparse array"),
            (&[("AWS_BATCH_JOB_ARRAY_INDEX", "1"), ("AWS_BATCH_JOB_ARRAY_SIZE", "8")], Some(10), "--shards 10 disagrees with AWS_BATCH_JOB_ARRAY_SIZE=8"),
            (&[("AWS_BATCH_JOB_ARRAY_INDEX", "1"), ("AWS_BATCH_JOB_ARRAY_SIZE", "eight")], None, "AWS_BATCH_JOB_ARRAY_SIZE=eight is not a whole number"),
            // Failed tasks 3 and 7 of `--array=0-9` submitted again as `--array=3,7`.
            (&[("SLURM_ARRAY_TASK_ID", "3"), ("SLURM_ARRAY_TASK_MIN", "3"), ("SLURM_ARRAY_TASK_MAX", "7"), ("SLURM_ARRAY_TASK_COUNT", "2")], None, "give each task its shard as --shard K/N"),
        ];
        for (vars, shards, says) in cases {
            let e = auto(&env(vars), shards).unwrap_err();
            assert!(e.contains(says), "{vars:?}: {e}");
        }
        // A one-job array is not shards.
        let e = auto(&env(&[("JOB_COMPLETION_INDEX", "0")]), Some(1)).unwrap_err();
        assert!(e.contains("N ≥ 2"), "{e}");
    }

    #[test]
    fn shards_as_written_parse() {
        assert_eq!("auto".parse::<ShardSpec>(), Ok(ShardSpec::Auto));
        assert_eq!(
            "2/4".parse::<ShardSpec>(),
            Ok(ShardSpec::Fixed(Shard { k: 2, n: 4 }))
        );
        assert!("5/4"
            .parse::<ShardSpec>()
            .unwrap_err()
            .contains("1 ≤ K ≤ N"));
        assert!("two".parse::<ShardSpec>().unwrap_err().contains("or auto"));
    }
}
