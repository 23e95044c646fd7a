//! Embeds every rule file under `rules/` so the binary works with no files beside it, and names
//! the build (`WINGUARD_BUILD_KEY`) for the cache of the compiled built-in rules.

use std::fmt::Write;
use std::hash::Hasher;
use std::path::Path;

/// What the compiled built-in rules depend on: the rule files, the catalog, the code that
/// compiles and stores them, the value model, and the locked dependencies.
const BUILD_INPUTS: &[&str] = &[
    "rules",
    "catalog",
    "src",
    "crates/yaml-value/src",
    "Cargo.lock",
];

/// Links the `winguard` executable at a fixed address (not position-independent) on Linux, unless
/// `WINGUARD_PIE=1` is set at build time.
///
/// Why: most runs are short (a pre-commit lint, a chart render) and a position-independent
/// executable pays at every start for relocating its tables of addresses in place, which copies
/// every page they are on, before any work is done; fixed, the loader relocates nothing and a
/// short run takes far fewer page faults (figures: BENCHMARKS.md, "Start-up"). Go links `helm`
/// and `kubectl` so too. The webhook image, a long-running server that starts once, keeps address
/// randomisation (its Dockerfile sets `WINGUARD_PIE=1`).
fn link_executable() {
    println!("cargo:rerun-if-env-changed=WINGUARD_PIE");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let pie = std::env::var("WINGUARD_PIE").as_deref() == Ok("1");
    if linux && !pie {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

fn main() {
    for input in BUILD_INPUTS {
        println!("cargo:rerun-if-changed={input}");
    }
    println!("cargo:rustc-env=WINGUARD_BUILD_KEY={:016x}", build_key());
    link_executable();
    let mut names: Vec<String> = std::fs::read_dir("rules")
        .expect("rules/ directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    names.sort();
    let mut out = String::from(
        "/// Rule files embedded at build time: (path, text).\npub const EMBEDDED_RULES: &[(&str, &str)] = &[\n",
    );
    for n in &names {
        writeln!(
            out,
            "    (\"rules/{n}\", include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/rules/{n}\"))),"
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded_rules.rs");
    std::fs::write(dest, out).unwrap();
}

/// A hash of every file of [`BUILD_INPUTS`] (paths and contents, in a fixed order) and of the
/// package version. (The standard library's hasher: the key need only be the same for the same
/// inputs within one build, which it is; no other build reads it.)
fn build_key() -> u64 {
    fn add(path: &Path, hasher: &mut std::hash::DefaultHasher) {
        if path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            entries.sort();
            for entry in entries {
                add(&entry, hasher);
            }
        } else if let Ok(bytes) = std::fs::read(path) {
            hasher.write(path.to_string_lossy().as_bytes());
            hasher.write(&bytes);
        }
    }
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(
        std::env::var("CARGO_PKG_VERSION")
            .unwrap_or_default()
            .as_bytes(),
    );
    for input in BUILD_INPUTS {
        add(Path::new(input), &mut hasher);
    }
    hasher.finish()
}
