//! The layers of ARCHITECTURE.md, held against the code: a module may import only modules of
//! lower layers, so an import that points up, or sideways within one layer, fails here (and with
//! it any cycle between modules). The two crates under `crates/` are held by the compiler: they
//! must not depend on winguard, which this test checks in their manifests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module of `src/` and its layer (ARCHITECTURE.md, "Layers"). `value` is the
/// value crate, which `lib.rs` names so; `json` is its macro.
const LAYERS: &[(&str, u32)] = &[
    ("value", 0),
    ("json", 0),
    ("error", 1),
    ("k8s", 1),
    ("write", 1),
    ("allocator", 1),
    ("cache", 1),
    ("expr", 2),
    ("manifest", 3),
    ("rules", 4),
    ("kustomize", 4),
    ("engine", 5),
    ("windows", 6),
    ("config", 7),
    ("registry", 7),
    ("report", 8),
    ("policy", 8),
    ("pipeline", 9),
    ("fix", 10),
    ("admission", 10),
    ("serve", 11),
    ("cli", 12),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The top-level module a file of `src/` belongs to (`src/engine/patch.rs` → `engine`).
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The code of a file as the build sees it outside tests: comments and the `#[cfg(test)]`
/// module at its end left out (a test may reach any layer to build its inputs).
fn code_of(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    code.lines()
        .map(|line| match line.find("//") {
            // A `//` inside a string (`"http://…"`) is rare in paths that matter here; cutting
            // there can only hide an import, never invent one.
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `code` names through `crate::…`, including inside `use crate::{…}`.
fn imports_of(code: &str) -> BTreeSet<String> {
    let path = regex::Regex::new(r"\bcrate::([a-z_][a-z0-9_]*)").unwrap();
    let group = regex::Regex::new(r"\bcrate::\{([^}]*)\}").unwrap();
    let first_word = regex::Regex::new(r"(?:^|,)\s*([a-z_][a-z0-9_]*)").unwrap();
    let mut found: BTreeSet<String> = path.captures_iter(code).map(|c| c[1].to_string()).collect();
    for g in group.captures_iter(code) {
        found.extend(first_word.captures_iter(&g[1]).map(|c| c[1].to_string()));
    }
    found
}

/// Every import between modules of `src/`: (from, to) → the files that make it.
fn module_imports() -> BTreeMap<(String, String), Vec<String>> {
    let src = root().join("src");
    let mut edges: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let relative = entry.path().strip_prefix(&src).unwrap();
        let Some(from) = module_of(relative) else {
            continue;
        };
        let text = std::fs::read_to_string(entry.path()).unwrap();
        for to in imports_of(&code_of(&text)) {
            if to != from {
                edges
                    .entry((from.clone(), to))
                    .or_default()
                    .push(relative.display().to_string());
            }
        }
    }
    edges
}

#[test]
fn every_module_has_a_layer() {
    let layers: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let declared = regex::Regex::new(r"(?m)^pub(?:\(crate\))? mod ([a-z_0-9]+);").unwrap();
    let mut seen = 0;
    for m in declared.captures_iter(&lib) {
        seen += 1;
        assert!(
            layers.contains_key(&m[1]),
            "module `{}` has no layer: add it to LAYERS here and to ARCHITECTURE.md",
            &m[1]
        );
    }
    assert!(seen >= 15, "only {seen} modules found in src/lib.rs");
    // ARCHITECTURE.md's table gives each module the same layer: `| N … | `a`, `b` | … |`.
    let architecture = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let row = regex::Regex::new(r"(?m)^\| (\d+)[^|]*\| ([^|]*)\|").unwrap();
    let name = regex::Regex::new(r"`([a-z_0-9]+)`").unwrap();
    let mut documented: BTreeMap<String, u32> = BTreeMap::new();
    for r in row.captures_iter(&architecture) {
        for n in name.captures_iter(&r[2]) {
            documented.insert(n[1].to_string(), r[1].parse().unwrap());
        }
    }
    for (module, layer) in LAYERS.iter().filter(|(m, _)| *m != "json") {
        assert_eq!(
            documented.get(*module),
            Some(layer),
            "ARCHITECTURE.md's layer table does not put `{module}` in layer {layer}"
        );
    }
}

#[test]
fn modules_import_only_lower_layers() {
    let layers: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let edges = module_imports();
    assert!(
        edges.len() > 30,
        "only {} imports between modules found",
        edges.len()
    );
    let mut wrong = Vec::new();
    for ((from, to), files) in &edges {
        let (Some(&f), Some(&t)) = (layers.get(from.as_str()), layers.get(to.as_str())) else {
            wrong.push(format!(
                "{from} -> {to}: a module without a layer ({files:?})"
            ));
            continue;
        };
        if t >= f {
            wrong.push(format!(
                "{from} (layer {f}) -> {to} (layer {t}), in {}",
                files.join(", ")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that do not point down:\n{}",
        wrong.join("\n")
    );
}

/// The checker itself: it finds both forms of import, and skips comments and test modules.
#[test]
fn the_import_reader_sees_what_the_compiler_sees() {
    let code = code_of(
        "use crate::engine::Context;\nuse crate::{config::Config, report};\n// crate::cli\nfn f() { crate::policy::x(); }\n#[cfg(test)]\nmod tests {\n    use crate::serve;\n}\n",
    );
    let found: Vec<String> = imports_of(&code).into_iter().collect();
    assert_eq!(found, ["config", "engine", "policy", "report"]);
}

#[test]
fn the_crates_depend_on_nothing_of_winguard() {
    for (krate, allowed) in [
        ("crates/yaml-value", &[][..]),
        ("crates/helm-engine", &["yaml-value"][..]),
    ] {
        let manifest = std::fs::read_to_string(root().join(krate).join("Cargo.toml")).unwrap();
        let manifest: toml::Table = manifest.parse().unwrap();
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let Some(deps) = manifest.get(section).and_then(|d| d.as_table()) else {
                continue;
            };
            for (name, spec) in deps {
                let local = spec.get("path").is_some();
                assert!(
                    !local || allowed.contains(&name.as_str()),
                    "{krate} depends on the local crate `{name}`"
                );
                assert_ne!(name, "winguard", "{krate} depends on winguard");
            }
        }
    }
}
