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
use std::sync::atomic::{AtomicU64, Ordering};

/// A file being written: a temporary file in the target's directory, removed unless finished; or,
/// for a target that is not a regular file (`/dev/null`, `/dev/stdout`, a pipe), the target itself,
/// which is never replaced.
#[derive(Debug)]
pub struct PendingFile {
    target: PathBuf,
    /// The temporary file, when the target is a regular file (or none yet).
    temp: Option<PathBuf>,
    file: Option<File>,
}

impl PendingFile {
    /// Creates the temporary file for `target` (`.NAME.PID.N.tmp` in the same directory, so that the
    /// rename stays on one file system; `N` counts this process's files, so that two outputs to one
    /// path never share one). A directory is refused; a link is followed to the file it names; a
    /// file that exists keeps its permissions (a rule file formatted in place stays as readable as it
    /// was), though not its hard links.
    pub fn create(target: &Path) -> io::Result<PendingFile> {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let mut target = target.to_path_buf();
        let mut permissions = None;
        if let Ok(meta) = std::fs::metadata(&target) {
            if meta.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "a directory, not a file",
                ));
            }
            if !meta.is_file() {
                // A device or a pipe: written as it is, never renamed over.
                let file = std::fs::OpenOptions::new().write(true).open(&target)?;
                return Ok(PendingFile {
                    target,
                    temp: None,
                    file: Some(file),
                });
            }
            if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
                target = std::fs::canonicalize(&target)?;
            }
            permissions = Some(meta.permissions());
        }
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(
            ".{}.{}.tmp",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let temp = target.with_file_name(temp_name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        let pending = PendingFile {
            target,
            temp: Some(temp),
            file: Some(file),
        };
        if let (Some(permissions), Some(file)) = (permissions, &pending.file) {
            // A file system without permissions (vfat) refuses them: the file is written all the
            // same.
            let _ = file.set_permissions(permissions);
        }
        Ok(pending)
    }

    /// Writes `bytes` and puts the file in the target's place.
    pub fn finish(mut self, bytes: &[u8]) -> io::Result<()> {
        let mut file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("finished twice"))?;
        file.write_all(bytes)?;
        let Some(temp) = &self.temp else {
            return file.flush();
        };
        file.sync_all()?;
        drop(file);
        std::fs::rename(temp, &self.target)?;
        self.temp = None;
        Ok(())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        // Unfinished (an error, or the work failed): the target stays as it was.
        if let Some(temp) = &self.temp {
            let _ = std::fs::remove_file(temp);
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
    fn two_outputs_to_one_path_do_not_share_a_temporary_file() {
        let d = dir("twice");
        let target = d.join("out.csv");
        let (a, b) = (
            PendingFile::create(&target).unwrap(),
            PendingFile::create(&target).unwrap(),
        );
        a.finish(b"first").unwrap();
        b.finish(b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "second");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_file_written_over_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir("mode");
        let target = d.join("game.kif");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_whole(&target, b"new").unwrap();
        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_device_is_written_in_place_and_a_directory_refused() {
        write_whole(Path::new("/dev/null"), b"gone").unwrap();
        assert!(std::fs::metadata("/dev/null").is_ok_and(|m| !m.is_file()));
        let d = dir("is-dir");
        assert!(PendingFile::create(&d).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_directory_that_does_not_exist_is_refused_at_creation() {
        let target = dir("missing").join("no/such/dir/scores");
        assert!(PendingFile::create(&target).is_err());
    }
}
