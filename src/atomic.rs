//! Writing files so that a crash never leaves one half-written (reports, fixed manifests,
//! generated certificates).

use std::io::Write;

/// Writes through a temporary file in the same directory and renames it into place, so a crash
/// never leaves a half-written file.
pub(crate) fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    // A new file gets the usual permissions (0666 less the umask, as `open` gives); a temporary
    // file would otherwise be private to its owner. A replaced file keeps its own.
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
