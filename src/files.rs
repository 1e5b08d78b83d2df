//! Files written whole or not at all.
//!
//! A [`PendingFile`] is created beside its target under a temporary name before the work that fills
//! it (training, a tournament, a match), so that a path that cannot be written is refused before the
//! work, not after; [`PendingFile::finish`] writes it and renames it over the target, so that an
//! error or an interruption part-way leaves the target as it was (a scores file, a rule file being
//! formatted in place), never cut short.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file being written: a temporary file in the target's directory, removed unless finished.
#[derive(Debug)]
pub struct PendingFile {
    target: PathBuf,
    temp: PathBuf,
    file: Option<File>,
}

impl PendingFile {
    /// Creates the temporary file for `target` (`.NAME.PID.tmp` in the same directory, so that the
    /// rename stays on one file system).
    pub fn create(target: &Path) -> io::Result<PendingFile> {
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = target.with_file_name(temp_name);
        let file = File::create(&temp)?;
        Ok(PendingFile {
            target: target.to_path_buf(),
            temp,
            file: Some(file),
        })
    }

    /// Writes `bytes` and puts the file in the target's place.
    pub fn finish(mut self, bytes: &[u8]) -> io::Result<()> {
        let mut file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("finished twice"))?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.temp, &self.target)
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        // Unfinished (an error, or the work failed): the target stays as it was.
        if self.file.is_some() || self.temp.exists() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` to `path` whole or not at all (see [`PendingFile`]).
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    PendingFile::create(path)?.finish(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ggp-files-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_unfinished_file_leaves_the_target_as_it_was_and_no_temporary_file() {
        let d = dir("unfinished");
        let target = d.join("scores");
        std::fs::write(&target, "old").unwrap();
        drop(PendingFile::create(&target).unwrap());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "a temporary file was left"
        );
        write_whole(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_directory_that_does_not_exist_is_refused_at_creation() {
        let target = dir("missing").join("no/such/dir/scores");
        assert!(PendingFile::create(&target).is_err());
    }
}
