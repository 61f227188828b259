//! Writes the example corpora under `corpora/` from calibench's generators and fixed seed.
//!
//!     cargo run --example generate_corpora
//!
//! The files are committed; `tests/review_run.rs` checks that they are exactly what the generators
//! produce, so nobody edits a corpus by hand.

use std::path::Path;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
    for (name, files) in calibench::generate::all(calibench::generate::SEED) {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir)?;
        for (file, contents) in files {
            let path = dir.join(file);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, contents)?;
        }
        println!("wrote {}", dir.display());
    }
    Ok(())
}
