//! The documentation holds together: every relative link of README.md and docs/ reaches a file
//! and heading that exist, README.md stays a front page that links every page of docs/, and the
//! Rust version README states is one every dependency builds with.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use common::*;

fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![
        root().join("README.md"),
        root().join("CHANGELOG.md"),
        root().join("ARCHITECTURE.md"),
    ];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut in_code = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.insert(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_relative_link_reaches_a_file_and_heading_that_exist() {
    let link = regex::Regex::new(r"\]\(([^)\s]*)\)").unwrap();
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for m in link.captures_iter(&text) {
            let target = &m[1];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
            let dest = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !dest.exists() {
                broken.push(format!("{}: {target}: no such file", file.display()));
                continue;
            }
            if !fragment.is_empty() && dest.is_file() {
                let headings = anchors(&std::fs::read_to_string(&dest).unwrap());
                if !headings.contains(fragment) {
                    broken.push(format!("{}: {target}: no such heading", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_front_page_that_links_every_page_of_the_docs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 150,
        "README.md has {lines} lines: move detail into docs/"
    );
    for page in markdown_files() {
        let Ok(relative) = page.strip_prefix(root().join("docs")) else {
            continue;
        };
        let link = format!("(docs/{})", relative.display());
        assert!(readme.contains(&link), "README.md does not link {link}");
    }
}

/// Each package winguard's binary is built from (normal and build dependencies, not the test
/// suite's) declares a `rust-version` at most the workspace's, which README.md states.
#[test]
fn every_dependency_builds_with_the_stated_rust_version() {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root())
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let version = |text: &str| -> (u64, u64) {
        let mut parts = text.split('.').map(|p| p.parse::<u64>().unwrap());
        (parts.next().unwrap(), parts.next().unwrap_or(0))
    };
    let packages = metadata["packages"].as_array().unwrap();
    let package = |id: &str| packages.iter().find(|p| p["id"] == id).unwrap();
    let root_id = metadata["resolve"]["root"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| {
            packages.iter().find(|p| p["name"] == "winguard").unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        });
    let stated = version(package(&root_id)["rust_version"].as_str().unwrap());
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("Rust {}.{} or newer", stated.0, stated.1)),
        "README.md does not state Rust {}.{}",
        stated.0,
        stated.1
    );
    let nodes = metadata["resolve"]["nodes"].as_array().unwrap();
    let mut seen = BTreeSet::new();
    let mut queue = vec![root_id.clone()];
    let mut too_new = Vec::new();
    while let Some(id) = queue.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        if let Some(needed) = package(&id)["rust_version"].as_str()
            && version(needed) > stated
        {
            too_new.push(format!("{} needs Rust {needed}", package(&id)["name"]));
        }
        let node = nodes.iter().find(|n| n["id"] == id.as_str()).unwrap();
        for dep in node["deps"].as_array().unwrap() {
            let built = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null() || k["kind"] == "build");
            if built {
                queue.push(dep["pkg"].as_str().unwrap().to_string());
            }
        }
    }
    assert!(seen.len() > 50, "only {} packages walked", seen.len());
    assert!(too_new.is_empty(), "{}", too_new.join("\n"));
}

#[test]
fn the_anchor_of_a_heading_is_githubs() {
    assert_eq!(anchor(" Exit codes"), "exit-codes");
    assert_eq!(
        anchor(" In the cluster: `winguard serve`"),
        "in-the-cluster-winguard-serve"
    );
}
