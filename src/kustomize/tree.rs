//! The kustomizations of a repository and what each names, so that a file is linted through the
//! overlays that use it. pre-commit passes the files a commit changed (a base's resource, an
//! overlay's patch, a kustomization); what reaches a cluster is what the overlays above them
//! build, so that is what is linted: each overlay once, a patch never as an object.
//!
//! An overlay here is a kustomization no other kustomization of the repository uses; a base used
//! by two overlays is linted through both, never on its own.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::manifest::{Exclusions, KUSTOMIZATION_FILES};

use super::remote::{MAX_KUSTOMIZATIONS, entries, join_lexically, read_yaml};

/// The fields of a kustomization that name a local kustomization or file it builds from
/// (`*` every item). Generator sources may be `key=path`.
const NAMES: &[&str] = &[
    "resources/*",
    "bases/*",
    "components/*",
    "patches/*/path",
    "patchesJson6902/*/path",
    "patchesStrategicMerge/*",
    "replacements/*/path",
    "crds/*",
    "configMapGenerator/*/files/*",
    "configMapGenerator/*/envs/*",
    "configMapGenerator/*/env",
    "secretGenerator/*/files/*",
    "secretGenerator/*/envs/*",
    "secretGenerator/*/env",
    "helmCharts/*/valuesFile",
];

/// One kustomization: its directory and what it names, all canonical.
#[derive(Debug)]
struct Node {
    dir: PathBuf,
    /// The directory as it is shown: relative to the working directory when under it.
    shown: PathBuf,
    /// The kustomization directories it builds on (resources, bases, components).
    kustomizations: Vec<PathBuf>,
    /// The files it reads.
    files: Vec<PathBuf>,
}

/// The kustomizations under one directory (a repository's top level).
#[derive(Debug, Default)]
pub(crate) struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    /// Reads every kustomization under `root` (not ignored by git, hidden, nor excluded), at most
    /// [`MAX_KUSTOMIZATIONS`]. One that can't be read names nothing: building it reports why.
    pub(crate) fn scan(root: &Path, exclude: &Exclusions) -> Tree {
        let cwd = std::env::current_dir().ok();
        let mut nodes = Vec::new();
        // What git ignores (build output, vendored trees) and hidden directories hold no
        // overlay of the repository's; `ignore` reads .gitignore as git does.
        let exclude = exclude.clone();
        let walker = ignore::WalkBuilder::new(root)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |e| e.depth() == 0 || !exclude.excludes(e.path()))
            .build();
        for entry in walker.flatten() {
            let is_kustomization = entry.file_type().is_some_and(|t| t.is_file())
                && KUSTOMIZATION_FILES
                    .iter()
                    .any(|k| entry.file_name().to_str() == Some(*k));
            let Some(dir) = entry.path().parent().filter(|_| is_kustomization) else {
                continue;
            };
            if nodes.len() >= MAX_KUSTOMIZATIONS {
                break;
            }
            if let Some(node) = Node::read(dir, cwd.as_deref()) {
                nodes.push(node);
            }
        }
        Tree { nodes }
    }

    /// The overlays a file is linted through: those above every kustomization that names it;
    /// `None` when no kustomization does.
    pub(crate) fn overlays_of_file(&self, file: &Path) -> Option<Vec<PathBuf>> {
        let file = std::fs::canonicalize(file).ok()?;
        let naming: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].files.contains(&file))
            .collect();
        (!naming.is_empty()).then(|| self.overlays_above(&naming))
    }

    /// The overlays a kustomization directory is linted through: itself when nothing uses it.
    pub(crate) fn overlays_of_dir(&self, dir: &Path) -> Vec<PathBuf> {
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        match self.nodes.iter().position(|n| n.dir == real) {
            Some(i) => self.overlays_above(&[i]),
            None => vec![dir.to_path_buf()],
        }
    }

    /// The kustomizations no other one uses, reached from `start` upwards, in the order found.
    fn overlays_above(&self, start: &[usize]) -> Vec<PathBuf> {
        let mut seen: HashSet<usize> = HashSet::new();
        let mut pending: Vec<usize> = start.to_vec();
        let mut overlays = Vec::new();
        while let Some(i) = pending.pop() {
            if !seen.insert(i) {
                continue;
            }
            let users: Vec<usize> = (0..self.nodes.len())
                .filter(|&u| self.nodes[u].kustomizations.contains(&self.nodes[i].dir))
                .collect();
            if users.is_empty() {
                overlays.push(self.nodes[i].shown.clone());
            }
            pending.extend(users);
        }
        overlays.sort();
        overlays
    }
}

impl Node {
    fn read(dir: &Path, cwd: Option<&Path>) -> Option<Node> {
        let real = std::fs::canonicalize(dir).ok()?;
        let file = super::kustomization_file(dir);
        let docs = read_yaml(&file, &mut Vec::new())?;
        let mut node = Node {
            shown: cwd
                .and_then(|c| real.strip_prefix(c).ok())
                .map(|p| {
                    if p.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        p.to_path_buf()
                    }
                })
                .unwrap_or_else(|| real.clone()),
            dir: real,
            kustomizations: Vec::new(),
            files: Vec::new(),
        };
        for doc in &docs {
            for pattern in NAMES {
                for (_, value, _) in entries(&doc.value, &doc.pos, pattern) {
                    // An inline patch (several lines) names no file.
                    let Some(text) = value.as_str().filter(|t| !t.contains('\n')) else {
                        continue;
                    };
                    let path = text.rsplit_once('=').map_or(text, |(_, p)| p).trim();
                    let Ok(named) = std::fs::canonicalize(join_lexically(dir, path)) else {
                        continue;
                    };
                    if crate::manifest::is_kustomization(&named) {
                        node.kustomizations.push(named);
                    } else if named.is_file() {
                        node.files.push(named);
                    }
                }
            }
        }
        Some(node)
    }
}

/// The kustomizations of the repositories a run's inputs lie in, each repository read when an
/// input first needs it.
pub(crate) struct Trees<'e> {
    exclude: &'e Exclusions,
    /// The directories given as inputs, absolute: where to look outside a repository.
    inputs: Vec<PathBuf>,
    scanned: Vec<(PathBuf, Tree)>,
}

impl<'e> Trees<'e> {
    pub(crate) fn new(exclude: &'e Exclusions, inputs: &[PathBuf]) -> Self {
        Trees {
            exclude,
            inputs: inputs
                .iter()
                .filter(|p| p.is_dir())
                .filter_map(|p| std::path::absolute(p).ok())
                .collect(),
            scanned: Vec::new(),
        }
    }

    /// The tree `path` is read in: its repository's (git's top level); outside one, the
    /// working directory's when it lies there, else the widest input directory holding it,
    /// else its own directory's.
    fn tree(&mut self, path: &Path) -> &Tree {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let cwd = std::env::current_dir()
            .ok()
            .filter(|c| absolute.starts_with(c));
        let widest_input = self
            .inputs
            .iter()
            .filter(|i| absolute.starts_with(i))
            .min_by_key(|i| i.components().count())
            .cloned();
        let root = crate::manifest::repository_root(&absolute)
            .map(Path::to_path_buf)
            .or(cwd)
            .or(widest_input)
            .unwrap_or_else(|| {
                if absolute.is_dir() {
                    absolute.clone()
                } else {
                    absolute.parent().unwrap_or(&absolute).to_path_buf()
                }
            });
        let i = match self.scanned.iter().position(|(r, _)| *r == root) {
            Some(i) => i,
            None => {
                let tree = Tree::scan(&root, self.exclude);
                self.scanned.push((root, tree));
                self.scanned.len() - 1
            }
        };
        &self.scanned[i].1
    }

    /// [`Tree::overlays_of_file`]. A kustomization reads only files at or below its own
    /// directory, so a file with no kustomization above it is a file of its own, found without
    /// reading the repository.
    pub(crate) fn overlays_of_file(&mut self, file: &Path) -> Option<Vec<PathBuf>> {
        let absolute = std::path::absolute(file).ok()?;
        let top = crate::manifest::repository_root(&absolute);
        let above = absolute
            .ancestors()
            .skip(1)
            .take_while(|d| top.is_none_or(|t| d.starts_with(t)))
            .any(crate::manifest::is_kustomization);
        if !above {
            return None;
        }
        self.tree(file).overlays_of_file(file)
    }

    /// [`Tree::overlays_of_dir`].
    pub(crate) fn overlays_of_dir(&mut self, dir: &Path) -> Vec<PathBuf> {
        self.tree(dir).overlays_of_dir(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn files_are_linted_through_the_overlays_above_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "base/kustomization.yaml", "resources: [app.yaml]\n");
        write(root, "base/app.yaml", "kind: ConfigMap\n");
        write(root, "base/notes.yaml", "kind: ConfigMap\n");
        write(
            root,
            "overlays/prod/kustomization.yaml",
            "resources: [../../base]\npatches:\n- path: patch.yaml\n",
        );
        write(root, "overlays/prod/patch.yaml", "kind: ConfigMap\n");
        write(
            root,
            "overlays/dev/kustomization.yaml",
            "bases:\n- ../../base\nconfigMapGenerator:\n- name: x\n  files: [k=settings.env]\n",
        );
        write(root, "overlays/dev/settings.env", "a=b\n");
        let tree = Tree::scan(root, &Exclusions::default());
        let real = |p: &str| std::fs::canonicalize(root.join(p)).unwrap();
        let overlays = |found: Vec<PathBuf>| -> Vec<PathBuf> {
            found
                .iter()
                .map(|p| std::fs::canonicalize(p).unwrap())
                .collect()
        };
        let both = vec![real("overlays/dev"), real("overlays/prod")];
        assert_eq!(
            overlays(tree.overlays_of_file(&root.join("base/app.yaml")).unwrap()),
            both
        );
        assert_eq!(
            overlays(
                tree.overlays_of_file(&root.join("overlays/prod/patch.yaml"))
                    .unwrap()
            ),
            vec![real("overlays/prod")]
        );
        assert_eq!(
            overlays(
                tree.overlays_of_file(&root.join("overlays/dev/settings.env"))
                    .unwrap()
            ),
            vec![real("overlays/dev")]
        );
        // A file beside a kustomization that names it not is a file of its own.
        assert!(
            tree.overlays_of_file(&root.join("base/notes.yaml"))
                .is_none()
        );
        assert_eq!(overlays(tree.overlays_of_dir(&root.join("base"))), both);
        assert_eq!(
            overlays(tree.overlays_of_dir(&root.join("overlays/prod"))),
            vec![real("overlays/prod")]
        );
    }
}
