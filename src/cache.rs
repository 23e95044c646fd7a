//! winguard's cache directory: what one run keeps for the next, so that work a run would repeat
//! unchanged is done once: compiling the built-in rules (once per build), reading images'
//! platforms from their registries (`images/`).
//!
//! Where: `WINGUARD_CACHE_DIR` if set, else the platform's cache directory (`$XDG_CACHE_HOME`
//! or `~/.cache` on Linux, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows) under
//! `winguard`. `WINGUARD_NO_CACHE` (any non-empty value) turns it off. The cache only ever
//! saves time: an entry that can't be read, written or used is made again, and no failure of
//! it is an error of the run.

use std::path::PathBuf;

/// The cache directory, or `None` when the cache is off or the platform has none.
pub fn dir() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if set("WINGUARD_NO_CACHE").is_some() {
        return None;
    }
    if let Some(dir) = set("WINGUARD_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    dirs::cache_dir().map(|d| d.join("winguard"))
}

/// An entry's bytes, if it is there.
pub fn read(name: &str) -> Option<Vec<u8>> {
    std::fs::read(dir()?.join(name)).ok()
}

/// Writes an entry at `path` (relative to the cache directory, its folders made as needed)
/// atomically, and keeps it: entries that stay true (what a digest names) are not pruned.
/// Best effort, as [`write`].
pub fn write_kept(path: &str, bytes: impl FnOnce() -> Vec<u8>) {
    if let Some(dir) = dir() {
        let _ = write_atomically(&dir.join(path), bytes);
    }
}

/// Writes `target` through a temporary file beside it (a reader sees the old file, none, or the
/// whole new one), making its folder if needed.
fn write_atomically(
    target: &std::path::Path,
    bytes: impl FnOnce() -> Vec<u8>,
) -> std::io::Result<()> {
    let folder = target
        .parent()
        .ok_or_else(|| std::io::Error::other("a cache entry outside any folder"))?;
    std::fs::create_dir_all(folder)?;
    let mut file = tempfile::NamedTempFile::new_in(folder)?;
    std::io::Write::write_all(&mut file, &bytes())?;
    file.persist(target).map_err(|e| e.error)?;
    Ok(())
}

/// How many entries of one kind the cache keeps: a few builds used side by side (an installed
/// winguard and a checkout's) each keep theirs, and old builds' entries go.
const ENTRIES_KEPT: usize = 4;

/// Writes an entry atomically (a reader sees the old entry, none, or the whole new one), and
/// removes the oldest entries of the same kind (`name` starting with `kind`, written by other
/// builds) beyond the newest [`ENTRIES_KEPT`]. The bytes are made only when there is a cache to
/// write them to. Best effort: a cache that can't be written is left as it is.
pub fn write(kind: &str, name: &str, bytes: impl FnOnce() -> Vec<u8>) {
    let Some(dir) = dir() else {
        return;
    };
    if write_atomically(&dir.join(name), bytes).is_err() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut others: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let file_name = e.file_name();
            let file_name = file_name.to_string_lossy();
            file_name.starts_with(kind) && file_name != name
        })
        .map(|e| {
            let modified = e
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            (modified, e.path())
        })
        .collect();
    // Newest first; this build's entry is one of the kept.
    others.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    for (_, path) in others.into_iter().skip(ENTRIES_KEPT - 1) {
        let _ = std::fs::remove_file(path);
    }
}
