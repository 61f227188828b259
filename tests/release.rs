//! The release route (docs/guides/ci-gate.md, "Installing calibench in CI"): the built binary
//! packed by `scripts/package-release.sh` exactly as the release workflow packs it, installed by
//! `scripts/install.sh` from a `file://` release laid out as GitHub lays one out, refused when a
//! byte of the archive changes, and the GitHub Action's two shell steps run as the runner runs
//! them, under a fake `GITHUB_STEP_SUMMARY`, `GITHUB_PATH` and `GITHUB_OUTPUT`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script(name: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg(root().join("scripts").join(name));
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The target install.sh picks on this machine.
fn host_target() -> String {
    let out = script("install.sh").arg("--target").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The debug binary packed into `out`: (archive, checksum file).
fn pack(out: &Path) -> (PathBuf, PathBuf) {
    let o = script("package-release.sh")
        .arg(out)
        .arg(env!("CARGO_BIN_EXE_calibench"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let name = format!("calibench-{}.tar.gz", host_target());
    (out.join(&name), out.join(format!("{name}.sha256")))
}

/// A release site as GitHub serves one: `download/v<version>/` and `latest/download/`.
fn site(dir: &Path, files: &[&Path]) -> String {
    let version = env!("CARGO_PKG_VERSION");
    for sub in [
        format!("download/v{version}"),
        "latest/download".to_string(),
    ] {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).unwrap();
        for f in files {
            std::fs::copy(f, d.join(f.file_name().unwrap())).unwrap();
        }
    }
    format!("file://{}", dir.display())
}

fn install(base: &str, into: &Path, version: Option<&str>) -> Output {
    let mut c = script("install.sh");
    c.env("CALIBENCH_RELEASE_BASE", base)
        .env("CALIBENCH_INSTALL_DIR", into)
        .env_remove("CALIBENCH_VERSION");
    if let Some(v) = version {
        c.env("CALIBENCH_VERSION", v);
    }
    c.output().unwrap()
}

fn version_of(binary: &Path) -> String {
    let o = Command::new(binary).arg("--version").output().unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

#[test]
fn the_packed_archive_holds_the_binary_readme_and_licences_with_its_checksum() {
    let tmp = tempfile::tempdir().unwrap();
    let (archive, sum) = pack(tmp.path());
    let target = host_target();
    let listing = Command::new("tar")
        .arg("-tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let mut names: Vec<String> = String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    names.sort();
    let dir = format!("calibench-{target}");
    assert_eq!(
        names,
        [
            format!("{dir}/"),
            format!("{dir}/LICENSE-APACHE"),
            format!("{dir}/LICENSE-DejaVu.txt"),
            format!("{dir}/LICENSE-MIT"),
            format!("{dir}/README.md"),
            format!("{dir}/calibench"),
        ]
    );
    // sha256sum's format, naming the archive: `sha256sum -c` checks it as it stands.
    let line = std::fs::read_to_string(&sum).unwrap();
    let (hash, file) = line.trim().split_once("  ").unwrap();
    assert_eq!(hash.len(), 64);
    assert_eq!(file, format!("calibench-{target}.tar.gz"));
    let check = Command::new("sha256sum")
        .arg("-c")
        .arg(sum.file_name().unwrap())
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", text(&check));
    // Nothing else is left in the output folder (the packing happens beside it).
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 2);
}

#[test]
fn install_sh_installs_the_latest_or_a_named_version_and_it_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (archive, sum) = pack(&tmp.path().join("dist"));
    let base = site(&tmp.path().join("site"), &[&archive, &sum]);
    let expected = format!("calibench {}", env!("CARGO_PKG_VERSION"));

    let latest = tmp.path().join("latest-bin");
    let o = install(&base, &latest, None);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(version_of(&latest.join("calibench")), expected);
    assert!(text(&o).contains("/latest/download/"), "{}", text(&o));

    let named = tmp.path().join("named-bin");
    let version = format!("v{}", env!("CARGO_PKG_VERSION"));
    let o = install(&base, &named, Some(&version));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(version_of(&named.join("calibench")), expected);
    assert!(
        text(&o).contains(&format!("/download/{version}/")),
        "{}",
        text(&o)
    );
    // Only the binary lands in the install folder: no temporary file is left beside it.
    assert_eq!(std::fs::read_dir(&named).unwrap().count(), 1);
}

#[test]
fn install_sh_refuses_an_archive_whose_checksum_does_not_match_and_installs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (archive, sum) = pack(&tmp.path().join("dist"));
    // One byte flipped in the middle of the archive.
    let mut bytes = std::fs::read(&archive).unwrap();
    let i = bytes.len() / 2;
    bytes[i] ^= 0x01;
    std::fs::write(&archive, bytes).unwrap();
    let base = site(&tmp.path().join("site"), &[&archive, &sum]);

    // Into an empty folder: nothing is installed.
    let fresh = tmp.path().join("fresh");
    let o = install(&base, &fresh, None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("checksum does not match"), "{}", text(&o));
    assert!(text(&o).contains("nothing was installed"), "{}", text(&o));
    assert!(!fresh.join("calibench").exists());

    // Over an earlier install: the earlier binary stays as it was.
    let earlier = tmp.path().join("earlier");
    std::fs::create_dir_all(&earlier).unwrap();
    std::fs::write(earlier.join("calibench"), b"the earlier binary").unwrap();
    let o = install(&base, &earlier, None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        std::fs::read(earlier.join("calibench")).unwrap(),
        b"the earlier binary"
    );
    assert_eq!(std::fs::read_dir(&earlier).unwrap().count(), 1);
}

#[test]
fn install_sh_says_when_no_archive_fits_and_when_the_checksum_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let (archive, sum) = pack(&tmp.path().join("dist"));

    // A version the release site does not have: exit 3, the action's cue to build from source.
    let base = site(&tmp.path().join("site"), &[&archive, &sum]);
    let o = install(&base, &tmp.path().join("bin"), Some("9.9.9"));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("no release archive for") && text(&o).contains("cargo install --locked"),
        "{}",
        text(&o)
    );

    // An archive without its checksum is never installed unchecked.
    let base = site(&tmp.path().join("unsummed"), &[&archive]);
    let o = install(&base, &tmp.path().join("bin"), None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(".sha256 could not be downloaded"),
        "{}",
        text(&o)
    );
    assert!(!tmp.path().join("bin/calibench").exists());
}

#[test]
fn install_sh_reads_the_releases_of_the_repository_cargo_toml_names() {
    // The one address a user's `curl … | sh` starts from, and binstall's `{ repo }`.
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let repository = manifest
        .lines()
        .find_map(|l| l.strip_prefix("repository = "))
        .unwrap()
        .trim_matches('"');
    let install = std::fs::read_to_string(root().join("scripts/install.sh")).unwrap();
    assert!(
        install.contains(&format!("DEFAULT_BASE=\"{repository}/releases\"")),
        "scripts/install.sh's DEFAULT_BASE is not {repository}/releases"
    );
}

/// The action's step environment: a fake runner's files and the inputs as action.yml passes them.
struct Runner {
    dir: tempfile::TempDir,
}

impl Runner {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for f in ["summary.md", "path", "output"] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        Runner { dir }
    }

    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    fn step(&self, name: &str, inputs: &[(&str, &str)]) -> Output {
        let mut c = script(name);
        c.current_dir(root())
            .env("GITHUB_STEP_SUMMARY", self.dir.path().join("summary.md"))
            .env("GITHUB_PATH", self.dir.path().join("path"))
            .env("GITHUB_OUTPUT", self.dir.path().join("output"))
            .env("CALIBENCH", env!("CARGO_BIN_EXE_calibench"));
        for (k, v) in inputs {
            c.env(k, v);
        }
        c.output().unwrap()
    }
}

#[test]
fn the_action_install_step_installs_the_release_and_puts_it_on_the_path() {
    let runner = Runner::new();
    let tmp = tempfile::tempdir().unwrap();
    let (archive, sum) = pack(&tmp.path().join("dist"));
    let base = site(&tmp.path().join("site"), &[&archive, &sum]);
    let bin = tmp.path().join("bin");
    let o = runner.step(
        "action-install.sh",
        &[
            ("INPUT_VERSION", "latest"),
            ("CALIBENCH_RELEASE_BASE", &base),
            ("CALIBENCH_INSTALL_DIR", bin.to_str().unwrap()),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(runner.file("path").trim(), bin.to_str().unwrap());
    assert!(String::from_utf8_lossy(&o.stdout).contains("calibench 0"));
}

#[test]
fn the_action_install_step_builds_from_source_when_no_archive_fits_but_never_on_a_bad_checksum() {
    let runner = Runner::new();
    let tmp = tempfile::tempdir().unwrap();
    // A `cargo` that records its arguments and "builds" the debug binary into --root.
    let fake = tmp.path().join("fake-bin");
    std::fs::create_dir_all(&fake).unwrap();
    let log = tmp.path().join("cargo.log");
    std::fs::write(
        fake.join("cargo"),
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\nmkdir -p \"$root/bin\" && cp '{}' \"$root/bin/calibench\"\n",
            log.display(),
            env!("CARGO_BIN_EXE_calibench")
        ),
    )
    .unwrap();
    let chmod = Command::new("chmod")
        .arg("+x")
        .arg(fake.join("cargo"))
        .status()
        .unwrap();
    assert!(chmod.success());
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let empty = tempfile::tempdir().unwrap();
    let base = format!("file://{}", empty.path().display());
    let bin = tmp.path().join("bin");

    // No archive at all for version 0.1.0: built at that tag, from the action's repository.
    let o = runner.step(
        "action-install.sh",
        &[
            ("INPUT_VERSION", "0.1.0"),
            ("ACTION_REPOSITORY", "calibench/calibench"),
            ("CALIBENCH_RELEASE_BASE", &base),
            ("CALIBENCH_INSTALL_DIR", bin.to_str().unwrap()),
            ("PATH", &path),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("::notice::no calibench 0.1.0 release archive fits this runner"),
        "{}",
        text(&o)
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains("install --locked --root")
            && calls
                .contains("--git https://github.com/calibench/calibench --tag v0.1.0 calibench"),
        "{calls}"
    );
    assert!(bin.join("calibench").exists());

    // Latest, with no archive: the action's own checkout is built.
    std::fs::remove_file(&log).unwrap();
    let o = runner.step(
        "action-install.sh",
        &[
            ("CALIBENCH_RELEASE_BASE", &base),
            ("CALIBENCH_INSTALL_DIR", bin.to_str().unwrap()),
            ("PATH", &path),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains(&format!("--path {}", root().display())),
        "{calls}"
    );

    // A damaged archive is a failure: nothing is built in its place.
    std::fs::remove_file(&log).unwrap();
    let (archive, sum) = pack(&tmp.path().join("dist"));
    let mut bytes = std::fs::read(&archive).unwrap();
    let i = bytes.len() / 3;
    bytes[i] ^= 0x80;
    std::fs::write(&archive, bytes).unwrap();
    let base = site(&tmp.path().join("site"), &[&archive, &sum]);
    let o = runner.step(
        "action-install.sh",
        &[
            ("CALIBENCH_RELEASE_BASE", &base),
            (
                "CALIBENCH_INSTALL_DIR",
                tmp.path().join("bin2").to_str().unwrap(),
            ),
            ("PATH", &path),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("checksum does not match"));
    assert!(!log.exists(), "cargo was called after a checksum failure");
}

#[test]
fn the_action_gate_step_passes_fails_and_refuses_with_the_gates_status() {
    let runner = Runner::new();
    let out = tempfile::tempdir().unwrap();
    let args = format!(
        "--runs-dir {0}/runs --reports-dir {0}/reports --no-plots",
        out.path().display()
    );
    let junit = out.path().join("junit.xml");

    // The example's own policy passes: exit 0, the summary on the summary page, a JUnit file.
    let o = runner.step(
        "action-gate.sh",
        &[
            ("INPUT_EXPERIMENT", "corpora/capacity-50"),
            ("INPUT_JUNIT", junit.to_str().unwrap()),
            ("INPUT_ARGS", &args),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(runner.file("summary.md").contains("capacity-50"));
    assert!(junit.exists());
    assert_eq!(runner.file("output").trim(), "exit-code=0");

    // A stricter policy fails: the step exits 1, as the gate did.
    let o = runner.step(
        "action-gate.sh",
        &[
            ("INPUT_EXPERIMENT", "corpora/code-review-ab"),
            ("INPUT_POLICY", "docs/ci/strict-gate.toml"),
            ("INPUT_ARGS", &args),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(runner.file("summary.md").contains("FAIL"));
    assert!(runner.file("output").contains("exit-code=1"));

    // Bad input: exit 2, and the summary page says the gate did not run.
    let o = runner.step(
        "action-gate.sh",
        &[
            ("INPUT_EXPERIMENT", "corpora/no-such-experiment"),
            ("INPUT_ARGS", &args),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(runner
        .file("summary.md")
        .contains("calibench gate: not run"));

    // A subject that is Markdown is shown as text in a fenced block, never as a link or HTML.
    let hostile = "bad`](javascript:alert(1))<img src=x onerror=alert(1)>";
    let o = runner.step(
        "action-gate.sh",
        &[("INPUT_EXPERIMENT", hostile), ("INPUT_ARGS", &args)],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let summary = runner.file("summary.md");
    assert!(
        summary.contains("```text\nbad'](javascript:alert(1))<img src=x onerror=alert(1)>\n```"),
        "{summary}"
    );

    // A summary page that cannot be written loses nothing: the step still exits with the
    // gate's status and writes exit-code first (hostile round 3, 11).
    for (subject, code) in [
        ("corpora/capacity-50", 0),
        ("corpora/no-such-experiment", 2),
    ] {
        let output = out.path().join(format!("output-{code}"));
        let o = script("action-gate.sh")
            .current_dir(root())
            .env("GITHUB_STEP_SUMMARY", "/proc/nope/s.md")
            .env("GITHUB_OUTPUT", &output)
            .env("CALIBENCH", env!("CARGO_BIN_EXE_calibench"))
            .env("INPUT_EXPERIMENT", subject)
            .env("INPUT_ARGS", &args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{}", text(&o));
        assert_eq!(
            std::fs::read_to_string(&output).unwrap().trim(),
            format!("exit-code={code}")
        );
        assert!(text(&o).contains("GITHUB_STEP_SUMMARY"), "{}", text(&o));
    }

    // Both an experiment and a run directory, or neither: a usage error before calibench runs.
    for inputs in [
        vec![
            ("INPUT_EXPERIMENT", "corpora/capacity-50"),
            ("INPUT_RUN_DIR", "runs/x"),
        ],
        vec![],
    ] {
        let o = runner.step("action-gate.sh", &inputs);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("`experiment`"), "{}", text(&o));
    }
}

#[test]
fn action_yml_passes_every_input_to_its_steps_and_runs_the_tested_scripts() {
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let inputs_block = action
        .split("\ninputs:\n")
        .nth(1)
        .and_then(|rest| rest.split("\noutputs:\n").next())
        .unwrap();
    let inputs: Vec<&str> = inputs_block
        .lines()
        .filter_map(|l| l.strip_prefix("  ")?.strip_suffix(':'))
        .filter(|l| !l.starts_with(' '))
        .collect();
    assert_eq!(
        inputs,
        [
            "version",
            "experiment",
            "run-dir",
            "policy",
            "junit",
            "summary",
            "args"
        ]
    );
    for input in &inputs {
        let env = format!(
            "INPUT_{}: ${{{{ inputs.{input} }}}}",
            input.to_uppercase().replace('-', "_")
        );
        assert!(action.contains(&env), "action.yml does not pass `{env}`");
    }
    for step in ["scripts/action-install.sh", "scripts/action-gate.sh"] {
        assert!(
            action.contains(&format!("\"$GITHUB_ACTION_PATH/{step}\"")),
            "{step}"
        );
    }
    // The workflow the CI guide hands out uses the action with inputs it has.
    let workflow = std::fs::read_to_string(root().join("docs/ci/calibench-gate.yml")).unwrap();
    let with = workflow
        .split("uses: calibench/calibench@v0\n        with:\n")
        .nth(1)
        .expect("docs/ci/calibench-gate.yml uses calibench/calibench@v0");
    let given: Vec<&str> = with
        .lines()
        .take_while(|l| l.starts_with("          "))
        .filter_map(|l| l.trim().split_once(':').map(|(k, _)| k))
        .collect();
    assert!(given.contains(&"experiment"), "{given:?}");
    for key in &given {
        assert!(
            inputs.contains(key),
            "docs/ci/calibench-gate.yml passes unknown input `{key}`"
        );
    }
    // The release workflow packs with the script the tests run.
    let release = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    assert!(release.contains("scripts/package-release.sh dist "));
    assert!(release.contains("scripts/install.sh"));
}

/// An archive of `staged` (a folder holding `calibench-TARGET/`) with its `.sha256` as the
/// release writes it, in `out`.
fn tar_of(staged: &Path, out: &Path) -> (PathBuf, PathBuf) {
    std::fs::create_dir_all(out).unwrap();
    let name = format!("calibench-{}.tar.gz", host_target());
    let archive = out.join(&name);
    let o = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(staged)
        .arg(format!("calibench-{}", host_target()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = Command::new("sha256sum")
        .arg(&name)
        .current_dir(out)
        .output()
        .unwrap();
    let sum = out.join(format!("{name}.sha256"));
    std::fs::write(&sum, &o.stdout).unwrap();
    (archive, sum)
}

// Regression (hostile round 3, 12): a symlinked calibench was made executable and run outside
// the archive, any program answering --version was installed, and a correct checksum in
// another common layout was refused with two identical-looking hashes.
#[test]
fn install_sh_installs_only_a_regular_calibench_and_reads_every_checksum_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = format!("calibench-{}", host_target());
    // A link to a script outside the archive: never chmod-ed, never run, never installed.
    let outside = tmp.path().join("outside-script");
    let pwned = tmp.path().join("pwned.txt");
    std::fs::write(&outside, format!("echo PWNED > '{}'\n", pwned.display())).unwrap();
    let staged = tmp.path().join("sym");
    std::fs::create_dir_all(staged.join(&inner)).unwrap();
    std::os::unix::fs::symlink(&outside, staged.join(&inner).join("calibench")).unwrap();
    let (archive, sum) = tar_of(&staged, &tmp.path().join("sym-dist"));
    let base = site(&tmp.path().join("sym-site"), &[&archive, &sum]);
    let o = install(&base, &tmp.path().join("bin-sym"), None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("holds no regular file"), "{}", text(&o));
    assert!(!pwned.exists(), "the linked script was run");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&outside).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0, "the linked script was made executable");
    assert!(!tmp.path().join("bin-sym/calibench").exists());

    // Another program packed as calibench: refused by its --version.
    let staged = tmp.path().join("ls");
    std::fs::create_dir_all(staged.join(&inner)).unwrap();
    std::fs::copy("/bin/ls", staged.join(&inner).join("calibench")).unwrap();
    let (archive, sum) = tar_of(&staged, &tmp.path().join("ls-dist"));
    let base = site(&tmp.path().join("ls-site"), &[&archive, &sum]);
    let o = install(&base, &tmp.path().join("bin-ls"), None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("is not calibench"), "{}", text(&o));
    assert!(!tmp.path().join("bin-ls/calibench").exists());

    // The right hash in every layout a checksum file comes in is read.
    let (archive, sum) = pack(&tmp.path().join("dist"));
    let hash = std::fs::read_to_string(&sum).unwrap();
    let hash = hash.split_whitespace().next().unwrap().to_string();
    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    for (layout, text_of) in [
        (
            "two-lines",
            format!(
                "{hash}  {name}\n{}  calibench-other.tar.gz\n",
                "0".repeat(64)
            ),
        ),
        (
            "other-first",
            format!(
                "{}  calibench-other.tar.gz\n{hash}  {name}\n",
                "0".repeat(64)
            ),
        ),
        ("crlf", format!("{hash}\r\n")),
        ("tab", format!("{hash}\t{name}\n")),
        ("binary-mark", format!("{hash} *{name}\n")),
        ("upper-case", format!("{}\n", hash.to_uppercase())),
    ] {
        let dist = tmp.path().join(format!("dist-{layout}"));
        std::fs::create_dir_all(&dist).unwrap();
        let a = dist.join(&name);
        std::fs::copy(&archive, &a).unwrap();
        let s = dist.join(format!("{name}.sha256"));
        std::fs::write(&s, text_of).unwrap();
        let base = site(&tmp.path().join(format!("site-{layout}")), &[&a, &s]);
        let into = tmp.path().join(format!("bin-{layout}"));
        let o = install(&base, &into, None);
        assert_eq!(o.status.code(), Some(0), "{layout}: {}", text(&o));
        assert!(into.join("calibench").is_file(), "{layout}");
    }
    // A wrong hash shows both, with their lengths, so they can be told apart.
    let dist = tmp.path().join("dist-wrong");
    std::fs::create_dir_all(&dist).unwrap();
    let a = dist.join(&name);
    std::fs::copy(&archive, &a).unwrap();
    let s = dist.join(format!("{name}.sha256"));
    std::fs::write(&s, format!("{}  {name}\n", &hash[..63])).unwrap();
    let base = site(&tmp.path().join("site-wrong"), &[&a, &s]);
    let o = install(&base, &tmp.path().join("bin-wrong"), None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("(64 characters), the release says"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("(63 characters)"), "{}", text(&o));
}
