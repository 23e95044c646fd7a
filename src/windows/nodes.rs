//! A cluster's nodes as `kubectl get nodes -o json` prints them (a `List` of `Node`s; a
//! `NodeList` or a single `Node` too): what the Windows model needs of each, its OS, Windows build
//! and taints.

use crate::error::{Error, ErrorKind};
use crate::value::{Doc, Value};

/// A node, as far as winguard reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Labelled `kubernetes.io/os: windows`, or reporting `operatingSystem: windows`.
    pub windows: bool,
    /// The Windows build number: from the `node.kubernetes.io/windows-build` label
    /// (`10.0.17763`), else the kubelet's `kernelVersion` (`10.0.17763.5329`).
    pub build: Option<u64>,
    /// `spec.taints`, each as `{key, value, effect}`.
    pub taints: Vec<Value>,
    /// `metadata.labels`: what nodeSelectors and node affinity match.
    pub labels: std::collections::BTreeMap<String, String>,
}

impl Node {
    /// Whether a pod's node selection takes this node: every `nodeSelector` label (a
    /// RuntimeClass's merged in), and one of the required affinity's terms, as the scheduler
    /// matches them. `None` when a term reads what a node file doesn't say (`matchFields`).
    pub(crate) fn selected_by(
        &self,
        node_selector: &[(&str, &str)],
        terms: &[&Doc<'_>],
    ) -> Option<bool> {
        if !node_selector
            .iter()
            .all(|(k, v)| self.labels.get(*k).map(String::as_str) == Some(*v))
        {
            return Some(false);
        }
        if terms.is_empty() {
            return Some(true);
        }
        let mut any = false;
        for term in terms {
            if term
                .get("matchFields")
                .and_then(Doc::as_array)
                .is_some_and(|f| !f.is_empty())
            {
                return None;
            }
            let expressions = term.get("matchExpressions").and_then(Doc::as_array);
            // A term with no expressions matches no node (the scheduler's rule).
            let Some(expressions) = expressions.filter(|e| !e.is_empty()) else {
                continue;
            };
            any |= expressions.iter().all(|e| self.matches(e));
        }
        Some(any)
    }

    /// One `matchExpressions` requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`).
    fn matches(&self, expression: &Doc<'_>) -> bool {
        let key = expression.get("key").and_then(Doc::as_str).unwrap_or("");
        let values: Vec<&str> = expression
            .get("values")
            .and_then(Doc::as_array)
            .map(|v| v.iter().filter_map(Doc::as_str).collect())
            .unwrap_or_default();
        let label = self.labels.get(key).map(String::as_str);
        let number = |s: &str| s.parse::<i64>().ok();
        let compare = |want: std::cmp::Ordering| match (
            label.and_then(number),
            values.first().copied().and_then(number),
        ) {
            (Some(l), Some(v)) => l.cmp(&v) == want,
            _ => false,
        };
        match expression
            .get("operator")
            .and_then(Doc::as_str)
            .unwrap_or("")
        {
            "In" => label.is_some_and(|l| values.contains(&l)),
            "NotIn" => label.is_none_or(|l| !values.contains(&l)),
            "Exists" => label.is_some(),
            "DoesNotExist" => label.is_none(),
            "Gt" => compare(std::cmp::Ordering::Greater),
            "Lt" => compare(std::cmp::Ordering::Less),
            _ => false,
        }
    }
}

/// Reads a nodes file's text; `file` names it in errors.
pub(crate) fn read_nodes(text: &str, file: &str) -> Result<Vec<Node>, Error> {
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| Error {
        kind: ErrorKind::Load,
        file: file.to_string(),
        line: u32::try_from(e.line()).ok(),
        column: u32::try_from(e.column()).ok(),
        message: format!("not the JSON of `kubectl get nodes -o json`: {e}"),
    })?;
    let fail = |message: String| Error::new(ErrorKind::Load, file, message);
    let kind = json.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    let items: Vec<&serde_json::Value> = match kind {
        "List" | "NodeList" => json
            .get("items")
            .and_then(|i| i.as_array())
            .ok_or_else(|| fail(format!("a {kind} without `items`")))?
            .iter()
            .collect(),
        "Node" => vec![&json],
        other => {
            return Err(fail(format!(
                "expected the nodes `kubectl get nodes -o json` prints (kind List, NodeList or \
                 Node), found kind `{other}`"
            )));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let item_kind = item.get("kind").and_then(|k| k.as_str()).unwrap_or("Node");
            if item_kind != "Node" {
                return Err(fail(format!("items[{i}] is a {item_kind}, not a Node")));
            }
            Ok(node(item))
        })
        .collect()
}

fn node(item: &serde_json::Value) -> Node {
    let text = |pointer: &str| item.pointer(pointer).and_then(|v| v.as_str());
    let labels = item
        .pointer("/metadata/labels")
        .and_then(|l| l.as_object())
        .map(|l| {
            l.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let label = |name: &str| {
        item.get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(|l| l.get(name))
            .and_then(|v| v.as_str())
    };
    let windows = label("kubernetes.io/os") == Some("windows")
        || text("/status/nodeInfo/operatingSystem") == Some("windows");
    let build = label("node.kubernetes.io/windows-build")
        .or_else(|| text("/status/nodeInfo/kernelVersion"))
        .filter(|_| windows)
        .and_then(super::build_of_version);
    let taints = item
        .pointer("/spec/taints")
        .and_then(|t| t.as_array())
        .map(|taints| {
            taints
                .iter()
                .map(|t| {
                    let field = |name: &str| t.get(name).and_then(|v| v.as_str()).unwrap_or("");
                    Doc::from(serde_json::json!({
                        "key": field("key"),
                        "value": field("value"),
                        "effect": field("effect"),
                    }))
                })
                .collect()
        })
        .unwrap_or_default();
    Node {
        windows,
        build,
        taints,
        labels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_come_from_the_label_or_the_kernel_version() {
        let node = |labels: &str, kernel: &str| {
            let text = format!(
                r#"{{"kind": "Node", "metadata": {{"labels": {labels}}},
                    "status": {{"nodeInfo": {{"kernelVersion": "{kernel}"}}}}}}"#
            );
            read_nodes(&text, "n.json").unwrap().remove(0).build
        };
        let windows = r#"{"kubernetes.io/os": "windows"}"#;
        let labelled =
            r#"{"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.17763"}"#;
        assert_eq!(node(labelled, "10.0.20348.2227"), Some(17763));
        assert_eq!(node(windows, "10.0.20348.2227"), Some(20348));
        assert_eq!(
            node(r#"{"kubernetes.io/os": "linux"}"#, "5.10.0-28-cloud-amd64"),
            None
        );
    }

    #[test]
    fn node_selection_matches_as_the_scheduler_does() {
        let node = Node {
            windows: true,
            build: Some(20348),
            taints: Vec::new(),
            labels: [("agentpool", "npwin"), ("gen", "3")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let term = |e: serde_json::Value| Doc::from(serde_json::json!({"matchExpressions": e}));
        let expr = |op: &str, key: &str, values: &[&str]| {
            term(serde_json::json!([{"key": key, "operator": op, "values": values}]))
        };
        let takes = |selector: &[(&str, &str)], terms: &[Value]| {
            node.selected_by(selector, &terms.iter().collect::<Vec<_>>())
        };
        assert_eq!(takes(&[("agentpool", "npwin")], &[]), Some(true));
        assert_eq!(takes(&[("agentpool", "user")], &[]), Some(false));
        assert_eq!(
            takes(&[], &[expr("In", "agentpool", &["a", "npwin"])]),
            Some(true)
        );
        assert_eq!(
            takes(&[], &[expr("NotIn", "agentpool", &["npwin"])]),
            Some(false)
        );
        assert_eq!(takes(&[], &[expr("NotIn", "zone", &["a"])]), Some(true));
        assert_eq!(takes(&[], &[expr("Exists", "gen", &[])]), Some(true));
        assert_eq!(takes(&[], &[expr("DoesNotExist", "gen", &[])]), Some(false));
        assert_eq!(takes(&[], &[expr("Gt", "gen", &["2"])]), Some(true));
        assert_eq!(takes(&[], &[expr("Lt", "gen", &["2"])]), Some(false));
        // Terms are ORed; an empty term matches nothing; matchFields can't be judged here.
        let none = term(serde_json::json!([]));
        assert_eq!(takes(&[], std::slice::from_ref(&none)), Some(false));
        assert_eq!(
            takes(&[], &[none, expr("In", "agentpool", &["npwin"])]),
            Some(true)
        );
        let fields = Doc::from(serde_json::json!({"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["akswin000000"]}]}));
        assert_eq!(takes(&[], &[fields]), None);
    }

    #[test]
    fn a_file_that_is_not_nodes_is_an_error_naming_it() {
        let e = read_nodes("{\"kind\": \"Pod\"}", "n.json").unwrap_err();
        assert!(e.message.contains("found kind `Pod`"), "{}", e.message);
        let e = read_nodes("{\"kind\": \"List\",", "n.json").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("n.json", Some(1)));
        let e = read_nodes(
            "{\"kind\": \"List\", \"items\": [{\"kind\": \"Pod\"}]}",
            "n.json",
        )
        .unwrap_err();
        assert!(e.message.contains("items[0] is a Pod"), "{}", e.message);
    }
}
