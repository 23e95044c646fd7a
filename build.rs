//! Embeds every rule file under `rules/` so the binary works with no files beside it.

use std::fmt::Write;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=rules");
    println!("cargo:rerun-if-changed=catalog");
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
