//! The cache of the compiled built-in rules, end to end: a run with no cache compiles them and
//! writes the entry, the next reads it back, and either way the findings are the same; a cache
//! that is off, corrupt or can't be written only costs time.

mod common;

use std::path::Path;

use common::*;

const EXAMPLE: &str = "testdata/examples/iis-app.yaml";

fn lint(cache: &Path, no_cache: bool) -> Run {
    let mut cmd = winguard();
    cmd.env("WINGUARD_CACHE_DIR", cache)
        .args(["lint", EXAMPLE, "--format", "json"]);
    if no_cache {
        cmd.env("WINGUARD_NO_CACHE", "1");
    }
    run_cmd(cmd, None)
}

fn entries(cache: &Path) -> Vec<std::path::PathBuf> {
    let Ok(dir) = std::fs::read_dir(cache) else {
        return Vec::new();
    };
    let mut out: Vec<_> = dir.map(|e| e.unwrap().path()).collect();
    out.sort();
    out
}

#[test]
fn a_run_reads_back_what_the_first_run_compiled_and_finds_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");

    let cold = lint(&cache, false);
    assert_eq!(cold.code, 1, "{}", cold.stderr);
    let written = entries(&cache);
    assert_eq!(written.len(), 1, "{written:?}");
    let name = written[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("builtin-rules-"), "{name}");
    let bytes = std::fs::read(&written[0]).unwrap();
    assert!(bytes.len() > 10_000, "{} bytes", bytes.len());

    let warm = lint(&cache, false);
    assert_eq!((warm.code, &warm.stdout), (cold.code, &cold.stdout));
    assert_eq!(std::fs::read(&written[0]).unwrap(), bytes);
    #[cfg(unix)]
    {
        // Read, not written again (a write replaces the file: a new inode).
        use std::os::unix::fs::MetadataExt;
        let before = std::fs::metadata(&written[0]).unwrap().ino();
        lint(&cache, false);
        assert_eq!(std::fs::metadata(&written[0]).unwrap().ino(), before);
    }

    let off = lint(&tmp.path().join("unused"), true);
    assert_eq!((off.code, &off.stdout), (cold.code, &cold.stdout));
    assert!(
        !tmp.path().join("unused").exists(),
        "WINGUARD_NO_CACHE writes nothing"
    );

    // A corrupt entry is compiled again and replaced.
    std::fs::write(&written[0], &bytes[..bytes.len() / 2]).unwrap();
    let mended = lint(&cache, false);
    assert_eq!((mended.code, &mended.stdout), (cold.code, &cold.stdout));
    assert_eq!(std::fs::read(&written[0]).unwrap(), bytes);

    // Other builds' entries: the newest stay beside this build's (an installed winguard and a
    // checkout's each keep theirs), the oldest go when this build writes its own.
    let other = |n: u64| cache.join(format!("builtin-rules-000000000000000{n}.bin"));
    for n in 1..=5 {
        std::fs::write(other(n), b"another build's").unwrap();
        // Each newer than the one before (file times can be coarse).
        let file = std::fs::File::options().write(true).open(other(n)).unwrap();
        file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(n))
            .unwrap();
    }
    std::fs::remove_file(&written[0]).unwrap();
    lint(&cache, false);
    let mut kept = vec![other(3), other(4), other(5), written[0].clone()];
    kept.sort();
    assert_eq!(entries(&cache), kept);
}

#[test]
fn a_cache_that_cannot_be_written_costs_only_time() {
    let tmp = tempfile::tempdir().unwrap();
    // The cache directory's place is taken by a file.
    let cache = tmp.path().join("file");
    std::fs::write(&cache, "not a directory").unwrap();
    let r = lint(&cache, false);
    let reference = lint(&tmp.path().join("cache"), false);
    assert_eq!((r.code, &r.stdout), (reference.code, &reference.stdout));
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

/// The two ways to the built-in rule set give the same one: compiled from the rule files, or
/// read back from its stored form (every rule, expression tree, chosen overload, prepared
/// literal, template and doc, as `Debug` shows them all).
#[test]
fn the_stored_rule_set_reads_back_as_the_compiled_one() {
    use winguard::policy::{compile_builtin_rules, registry};
    use winguard::rules::RuleSet;
    let compiled = compile_builtin_rules().unwrap();
    let stored = compiled.to_stored();
    let read = RuleSet::from_stored(&stored, registry()).unwrap();
    assert_eq!(read.rules.len(), compiled.rules.len());
    assert!(read.rules.len() > 20);
    assert_eq!(format!("{read:#?}"), format!("{compiled:#?}"));
    assert_eq!(read.to_stored(), stored);
    // Cut short, or read with a registry that lacks its functions, it is an error, not a crash.
    let mut truncated = stored.clone();
    truncated.truncate(stored.len() / 3);
    assert!(RuleSet::from_stored(&truncated, registry()).is_err());
    assert!(RuleSet::from_stored(&stored, &winguard::expr::Registry::default()).is_err());
}
