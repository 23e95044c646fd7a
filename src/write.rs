//! Writing a file in place of the one a user has (fixed manifests, values files, reports,
//! generated certificates) so that it stays theirs: same owner, group and mode, a symbolic link
//! still a link with its target changed, every hard link seeing the new text, a read-only file
//! left alone, and no half-written file or stray temporary file when winguard is killed midway.
//!
//! A file with one name is replaced by a rename: the new text goes into a temporary file in the
//! same directory, which is given the old file's owner, group and mode, synced, and renamed over
//! it, so a reader (or a crash) sees the old text or the new one, never a mix. On Linux the
//! temporary file has no name until it is complete (`O_TMPFILE`, then linked in); elsewhere, or
//! where the filesystem cannot do that, it is named `.winguard-tmp-XXXXXX`. Either way a run
//! killed between the link and the rename can leave one behind, so each run removes those no
//! live process holds (the writer keeps an `flock` on its own) before writing in a directory.
//!
//! A file with more than one hard link, or one whose owner the writer cannot give a new file (not
//! root, another user's file), is written in place instead, as `vim` and `emacs` do: a rename would
//! give that name a new file, leaving the other links with the old text or the file with a new
//! owner. Space is reserved first, so a full disk fails before anything is overwritten; a kill
//! during that one write can leave the file part old, part new, which is the price of keeping
//! its links (there is no atomic way to replace an inode's content).

use std::collections::HashSet;
use std::fs::{File, Metadata};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The start of a temporary file's name; with [`TEMP_RANDOM_LEN`] alphanumerics after it, a
/// name this module made, which a later run may remove.
const TEMP_PREFIX: &str = ".winguard-tmp-";
const TEMP_RANDOM_LEN: usize = 6;
/// Where a lock cannot tell (a filesystem without `flock`, or not Unix), a temporary file this
/// old is taken as abandoned: no write of a file takes anywhere near as long.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Why a file was not written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteError {
    #[error(
        "{}: left unchanged: a symbolic link to {}, which is outside the paths given",
        path.display(),
        target.display()
    )]
    OutsideRoots { path: PathBuf, target: PathBuf },
    #[error("{}: left unchanged: the file is read-only", path.display())]
    ReadOnly { path: PathBuf },
    #[error("{}: left unchanged: its directory {} is read-only", path.display(), dir.display())]
    ReadOnlyDirectory { path: PathBuf, dir: PathBuf },
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl WriteError {
    /// The file was left alone on purpose (read-only, or reached through a link that leaves the
    /// paths given), rather than failing to be written.
    pub(crate) fn is_refusal(&self) -> bool {
        !matches!(self, WriteError::Io { .. })
    }
}

/// Writes files in place of existing ones (see the module docs), removing abandoned temporary
/// files once per directory.
pub(crate) struct FileWriter {
    /// Canonical paths a file reached through a symbolic link must lie under; `None`: anywhere.
    roots: Option<Vec<PathBuf>>,
    swept: HashSet<PathBuf>,
}

impl FileWriter {
    /// For a file the user named for output (a report, a certificate): a link there leads
    /// wherever the user pointed it.
    pub(crate) fn anywhere() -> FileWriter {
        FileWriter {
            roots: None,
            swept: HashSet::new(),
        }
    }

    /// For files found under `roots` (the paths given on the command line): a file whose real
    /// path is not under one of them is not written. Roots that do not exist are left out.
    pub(crate) fn within(roots: &[PathBuf]) -> FileWriter {
        FileWriter {
            roots: Some(
                roots
                    .iter()
                    .filter_map(|r| std::fs::canonicalize(r).ok())
                    .collect(),
            ),
            swept: HashSet::new(),
        }
    }

    /// Writes `bytes` as the content of `path`: creates it if it does not exist, writes through
    /// a symbolic link, and otherwise keeps what makes the file the user's (module docs).
    pub(crate) fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
        let io = |source| WriteError::Io {
            path: path.to_path_buf(),
            source,
        };
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            // Not there, and not a link to nothing: a new file.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && std::fs::symlink_metadata(path).is_err() =>
            {
                let dir = parent_dir(path);
                self.sweep(dir);
                return replace_by_rename(dir, path, bytes, None)
                    .map(drop)
                    .map_err(io);
            }
            Err(e) => return Err(io(e)),
        };
        if !meta.is_file() {
            // A device or a pipe (`--output /dev/stdout`): there is nothing to replace.
            return std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|mut f| f.write_all(bytes))
                .map_err(io);
        }
        let real = std::fs::canonicalize(path).map_err(io)?;
        if let Some(roots) = &self.roots
            && !roots.iter().any(|root| real.starts_with(root))
        {
            return Err(WriteError::OutsideRoots {
                path: path.to_path_buf(),
                target: real,
            });
        }
        if is_read_only(&real, &meta) {
            return Err(WriteError::ReadOnly {
                path: path.to_path_buf(),
            });
        }
        let dir = parent_dir(&real);
        // (On Windows a directory's read-only attribute means nothing for its files.)
        if cfg!(unix)
            && let Ok(dir_meta) = std::fs::metadata(dir)
            && is_read_only(dir, &dir_meta)
        {
            return Err(WriteError::ReadOnlyDirectory {
                path: path.to_path_buf(),
                dir: dir.to_path_buf(),
            });
        }
        if has_other_links(&meta) {
            return write_in_place(&real, bytes).map_err(io);
        }
        self.sweep(dir);
        match replace_by_rename(dir, &real, bytes, Some(&meta)).map_err(io)? {
            Replaced::Done => Ok(()),
            Replaced::OwnerNotKept => write_in_place(&real, bytes).map_err(io),
        }
    }

    /// Removes the temporary files killed runs left in `dir`, once per run.
    fn sweep(&mut self, dir: &Path) {
        if !self.swept.insert(dir.to_path_buf()) {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            if is_temp_name(&entry.file_name())
                && entry.file_type().is_ok_and(|t| t.is_file())
                && is_abandoned(&entry.path())
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// Writes a file the user named for output: see [`FileWriter::anywhere`].
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    FileWriter::anywhere().write(path, bytes)
}

/// Writes a file only its owner may read (a private key): made 0600 beside `path` and renamed
/// over it, whatever mode a file it replaces had, so the content is never readable by anyone
/// else, even for a moment.
pub(crate) fn write_private_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = parent_dir(path);
    FileWriter::anywhere().sweep(dir);
    let mut temp = TempFile::new_in(dir, 0o600).map_err(io)?;
    temp.file
        .write_all(bytes)
        .and_then(|()| temp.file.sync_all())
        .map_err(io)?;
    temp.persist(dir, path).map_err(io)
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A file (or directory) the user has marked read-only: no write permission bit at all, which
/// root would otherwise ignore, or, for anyone else, none that lets them write it.
fn is_read_only(path: &Path, meta: &Metadata) -> bool {
    if meta.permissions().readonly() {
        return true;
    }
    #[cfg(unix)]
    {
        use rustix::fs::{Access, AtFlags, CWD, accessat};
        use rustix::io::Errno;
        matches!(
            accessat(CWD, path, Access::WRITE_OK, AtFlags::EACCESS),
            Err(Errno::ACCESS | Errno::PERM)
        )
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

fn has_other_links(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.nlink() > 1
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// How a replacement by rename ended.
enum Replaced {
    Done,
    /// The new file could not be given the old one's owner or group (the writer is not root):
    /// nothing was replaced.
    OwnerNotKept,
}

/// Writes `bytes` to a temporary file in `dir`, gives it `old`'s owner, group and mode (or, for a
/// new file, what `open` would: 0666 less the umask), and renames it to `target`.
fn replace_by_rename(
    dir: &Path,
    target: &Path,
    bytes: &[u8],
    old: Option<&Metadata>,
) -> std::io::Result<Replaced> {
    // A replacement starts private and takes the old mode once it has the old owner, so a
    // private file's new text is never readable by others, even for a moment; a new file gets
    // what `open` gives.
    let mode = if old.is_some() { 0o600 } else { 0o666 };
    let mut temp = TempFile::new_in(dir, mode)?;
    temp.file.write_all(bytes)?;
    if let Some(old) = old {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let new = temp.file.metadata()?;
            if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
                match std::os::unix::fs::fchown(&temp.file, Some(old.uid()), Some(old.gid())) {
                    Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                        return Ok(Replaced::OwnerNotKept);
                    }
                    other => other?,
                }
            }
        }
        // After the owner: changing it clears the set-user-ID and set-group-ID bits.
        temp.file.set_permissions(old.permissions())?;
    }
    temp.file.sync_all()?;
    temp.persist(dir, target)?;
    // The rename itself is durable once the directory is synced; a failure here leaves the new
    // file in place, which is all the caller asked for.
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(Replaced::Done)
}

/// Overwrites `target`'s content, keeping the file itself (its links, owner, mode).
fn write_in_place(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).open(target)?;
    reserve(&file, bytes.len() as u64)?;
    file.write_all(bytes)?;
    file.set_len(bytes.len() as u64)?;
    file.sync_all()
}

/// Allocates the blocks `len` bytes of `file` need without changing its size, so a full disk (or
/// a file size limit) fails the write before the old content is touched. The new text is already
/// whole in memory, so space is the one thing that could fail midway.
#[cfg(target_os = "linux")]
fn reserve(file: &File, len: u64) -> std::io::Result<()> {
    use rustix::fs::{FallocateFlags, fallocate};
    use rustix::io::Errno;
    match fallocate(file, FallocateFlags::KEEP_SIZE, 0, len) {
        Ok(()) | Err(Errno::OPNOTSUPP | Errno::NOSYS) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn reserve(_file: &File, _len: u64) -> std::io::Result<()> {
    Ok(())
}

/// A temporary file in the directory of the file it will replace, locked (Unix) while it lives
/// so that a sweep can tell it from one a killed run left.
struct TempFile {
    file: File,
    /// Its name, when it has one (it was not opened with `O_TMPFILE`).
    path: Option<tempfile::TempPath>,
}

impl TempFile {
    /// A temporary file created with `mode` (less the umask).
    fn new_in(dir: &Path, mode: u32) -> std::io::Result<TempFile> {
        #[cfg(target_os = "linux")]
        if let Some(file) = open_unnamed(dir, mode) {
            lock(&file)?;
            return Ok(TempFile { file, path: None });
        }
        #[cfg_attr(not(unix), expect(unused_mut))]
        let mut builder = temp_names();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(mode));
        }
        #[cfg(not(unix))]
        let _ = mode;
        let (file, path) = builder.tempfile_in(dir)?.into_parts();
        #[cfg(unix)]
        lock(&file)?;
        Ok(TempFile {
            file,
            path: Some(path),
        })
    }

    /// Gives the file its final name, `target` (replacing what is there).
    fn persist(self, dir: &Path, target: &Path) -> std::io::Result<()> {
        let path = match self.path {
            Some(path) => path,
            #[cfg(target_os = "linux")]
            None => link_unnamed(&self.file, dir)?,
            #[cfg(not(target_os = "linux"))]
            None => {
                let _ = dir;
                return Err(std::io::Error::other("an unnamed file outside Linux"));
            }
        };
        path.persist(target).map_err(|e| e.error)
    }
}

/// The names temporary files get (see [`is_temp_name`]).
fn temp_names() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX).rand_bytes(TEMP_RANDOM_LEN);
    builder
}

/// Whether `name` is one [`temp_names`] gives: a file named so in a user's directory is
/// winguard's own.
fn is_temp_name(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .and_then(|n| n.strip_prefix(TEMP_PREFIX))
        .is_some_and(|rest| {
            rest.len() == TEMP_RANDOM_LEN && rest.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

/// An unnamed file in `dir`, or `None` where the filesystem (or kernel, or a missing `/proc`
/// to link it through) cannot make one.
#[cfg(target_os = "linux")]
fn open_unnamed(dir: &Path, mode: u32) -> Option<File> {
    use rustix::fs::{CWD, Mode, OFlags, openat};
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    openat(
        CWD,
        dir,
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
    .ok()
    .map(File::from)
}

/// Links the unnamed `file` into `dir` under a temporary name: `linkat` cannot replace a file, so
/// the rename that follows does.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, dir: &Path) -> std::io::Result<tempfile::TempPath> {
    use rustix::fs::{AtFlags, CWD, linkat};
    use std::os::fd::AsRawFd;
    let fd_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let linked = temp_names().make_in(dir, |name| {
        linkat(CWD, fd_path.as_str(), CWD, name, AtFlags::SYMLINK_FOLLOW).map_err(Into::into)
    })?;
    Ok(linked.into_temp_path())
}

#[cfg(unix)]
fn lock(file: &File) -> std::io::Result<()> {
    use rustix::fs::{FlockOperation, flock};
    use rustix::io::Errno;
    match flock(file, FlockOperation::LockExclusive) {
        // Without locks, the sweep goes by age.
        Ok(()) | Err(Errno::OPNOTSUPP | Errno::NOLCK) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Whether the temporary file at `path` was left by a run that is gone: nobody holds its lock
/// (the lock goes with the process), or, where locks say nothing, it is old.
fn is_abandoned(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use rustix::fs::{FlockOperation, flock};
        use rustix::io::Errno;
        if let Ok(file) = File::open(path) {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return true,
                Err(Errno::WOULDBLOCK) => return false,
                Err(_) => {}
            }
        }
    }
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > ABANDONED_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_this_module_makes_are_temporary() {
        let made = temp_names().tempfile_in(std::env::temp_dir()).unwrap();
        assert!(is_temp_name(made.path().file_name().unwrap()));
        for other in [
            ".winguard-tmp-",
            ".winguard-tmp-abc",
            ".winguard-tmp-abcdefg",
            ".winguard-tmp-abc.de",
            "winguard-tmp-abcdef",
            ".tmpabcdef",
        ] {
            assert!(!is_temp_name(std::ffi::OsStr::new(other)), "{other}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_write_removes_the_temporary_files_no_live_run_holds() {
        let dir = tempfile::tempdir().unwrap();
        let names = [
            ".winguard-tmp-Abandn",
            ".winguard-tmp-Living",
            ".winguard-tmp-someone-elses",
        ];
        for name in names {
            std::fs::write(dir.path().join(name), "half a file").unwrap();
        }
        // A run still writing holds its temporary file's lock.
        let living = File::open(dir.path().join(names[1])).unwrap();
        lock(&living).unwrap();
        write_file(&dir.path().join("report.txt"), b"new").unwrap();
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [names[1], names[2], "report.txt"]);
    }
}
