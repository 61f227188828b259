//! A corpus folder that is a collection (it holds `collect.json`): read through the record's
//! type, and replayed only once every call is recorded, unless the user asks to replay it as it
//! is.

use std::path::Path;

use super::loaded::Loaded;
use super::read::read;
use crate::corpus::collection::{Collection, Status};
use crate::error::{Error, InputError};

/// A collect run directory replays only once every call is recorded: an interrupted one holds
/// partial arms, which would replay as if they were whole. A record that does not read is
/// refused naming its field: its harness record would otherwise go unchecked.
pub(super) fn check_collection(loaded: &mut Loaded, path: &Path, allow: bool) -> Result<(), Error> {
    let name = path.display().to_string();
    let bytes = read(path, &mut loaded.inputs)?;
    let record = match Collection::read(&name, &bytes) {
        Ok(r) => r,
        Err(e) => {
            loaded.refusals.push(e);
            return Ok(());
        }
    };
    loaded.provenance = record.provenance.clone().map(|p| (name.clone(), p));
    let status = record.status;
    if status == Status::Complete {
        return Ok(());
    }
    let note = format!(
        "{name} says the collection did not finish (status `{}`): some calls are not recorded, so arms may be partial",
        status.name()
    );
    if allow {
        loaded.incomplete = Some(note);
        loaded.collecting = record.arms;
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let resume = format!(
        "calibench collect {} --resume {} --runs-dir {}",
        record.experiment_file,
        record.run_id,
        dir.parent().unwrap_or(Path::new(".")).display()
    );
    loaded.refusals.push(
        InputError::new(
            &name,
            format!(
                "is an unfinished collection (status `{}`): replaying it would replay partial arms as if they were whole",
                status.name()
            ),
        )
        .field("`status`")
        .hint(format!(
            "finish it first: {resume}; or replay it as it is with --allow-incomplete, and the report says it is incomplete"
        )),
    );
    Ok(())
}
