//! Testing rules, as `kyverno test` tests policies: each rule of a directory against its own
//! documented examples (`docs.bad` must fire it, `docs.good` must not, under `docs.config`) and
//! its fixtures (`NAME/fail-*.yaml` must fire it, `NAME/pass-*.yaml` must not, `NAME/fixed-*.yaml`
//! is the `fail-*` of the same suffix after the rule's fixes; a fixture's first line may be
//! `# config: {…}`). These are the conventions of the built-in rules' own tests, so
//! `winguard test-rules rules --fixtures testdata/rules` runs them.
//!
//! A case runs the engine on the text's objects under a policy of its own config. The policy owns
//! its rule set and rule sets are compiled, not cloned, so each config loads the rules afresh.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::engine::{Context, Finding, evaluate_batch, patch};
use crate::error::{Error, ErrorKind, Errors};
use crate::manifest::{SourceText, parse_source};
use crate::rules::RuleSet;
use crate::value::Value;

use super::{Policy, builtin_rules, registry};

/// One checked case of one rule.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RuleCase {
    pub rule: String,
    /// `docs.bad`, `docs.good`, or the fixture's path.
    pub case: String,
    /// Why the case failed; `None` when it passed.
    pub failure: Option<String>,
}

/// Where a rule set comes from: directories of rule files and, unless they redefine them, the
/// built-in rules.
struct RuleFiles<'a> {
    dirs: &'a [PathBuf],
}

impl RuleFiles<'_> {
    /// The rules of the directories, then every built-in rule they don't redefine.
    fn load(&self) -> Result<RuleSet, Errors> {
        let mut set = RuleSet::default();
        let mut problems = Vec::new();
        for dir in self.dirs {
            if let Err(errors) = set.add_dir(dir, registry()) {
                problems.extend(errors);
            }
        }
        if !problems.is_empty() {
            return Err(Errors(problems));
        }
        for rule in builtin_rules()?.rules {
            if set.get(&rule.name).is_none() {
                set.rules.push(rule);
            }
        }
        Ok(set)
    }

    /// A policy of these rules under `config` (from `config_text`, named `config_name`). Rules
    /// run as configured: an opt-in rule's example or fixture turns it on in its config, as a
    /// user would (and `pass-off-by-default` can hold).
    fn policy(&self, config_text: Option<&str>, config_name: &str) -> Result<Policy, String> {
        let config = match config_text {
            Some(text) => Config::parse(text, config_name).map_err(|e| e.to_string())?,
            None => Config::default(),
        };
        let set = self.load().map_err(|e| e.to_string())?;
        Policy::new(set, config).map_err(|e| e.to_string())
    }
}

/// The objects of `text` (named `name`); an unreadable document is the error.
fn objects_of(name: &str, text: &str) -> Result<Vec<Value>, String> {
    let (objects, errors) = parse_source(&Arc::new(SourceText::new(name, text)));
    match errors.first() {
        Some(e) => Err(e.to_string()),
        None => Ok(objects.into_iter().map(|o| o.value).collect()),
    }
}

/// `rule`'s findings on each of `objects`, evaluated together as one input set.
fn findings_of(policy: &Policy, objects: &[Value], rule: &str) -> Vec<Vec<Finding>> {
    let refs: Vec<&Value> = objects.iter().collect();
    let ctx = Context::new(policy.basis(), &refs);
    evaluate_batch(&policy.rules, &ctx, &refs)
        .into_iter()
        .map(|found| found.into_iter().filter(|f| f.rule == rule).collect())
        .collect()
}

/// Whether `rule` fires on `text` under `policy`.
fn fires(policy: &Policy, name: &str, text: &str, rule: &str) -> Result<Vec<String>, String> {
    let objects = objects_of(name, text)?;
    Ok(findings_of(policy, &objects, rule)
        .into_iter()
        .flatten()
        .map(|f| f.message)
        .collect())
}

/// A fixture's config: its first `# config: {…}` line.
fn fixture_config(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.strip_prefix("# config:"))
        .map(str::trim)
}

/// The built-in rules and those of `dirs`, each of the latter checked to fire on its own
/// `docs.bad` example: a rule that doesn't is an error at its file, so a broken custom rule is
/// found when it is loaded, not when it silently passes everything.
pub fn load_checked(dirs: &[PathBuf]) -> Result<RuleSet, Errors> {
    let files = RuleFiles { dirs };
    // The built-in rules first: `RuleSet::add` refuses a user rule that redefines one.
    let mut set = builtin_rules()?;
    let builtin = set.rules.len();
    let mut problems = Vec::new();
    for dir in dirs {
        if let Err(errors) = set.add_dir(dir, registry()) {
            problems.extend(errors);
        }
    }
    if !problems.is_empty() {
        return Err(Errors(problems));
    }
    let own = &set.rules[builtin..];
    // One policy per distinct `docs.config`: most rules share the default one.
    let mut groups: Vec<(Option<&str>, Vec<&crate::rules::Rule>)> = Vec::new();
    for rule in own {
        let config = rule.docs.config.as_deref();
        match groups.iter_mut().find(|(c, _)| *c == config) {
            Some((_, rules)) => rules.push(rule),
            None => groups.push((config, vec![rule])),
        }
    }
    for (config, rules) in groups {
        let policy = match files.policy(config, "docs.config") {
            Ok(p) => p,
            Err(message) => {
                problems.extend(rules.iter().map(|r| {
                    Error::new(
                        ErrorKind::Load,
                        &r.source,
                        format!("rule `{}`: its `docs.config`: {message}", r.name),
                    )
                }));
                continue;
            }
        };
        for rule in rules {
            let problem = match fires(&policy, "docs.bad", &rule.docs.bad, &rule.name) {
                Ok(messages) if !messages.is_empty() => continue,
                Ok(_) => "does not fire it".to_string(),
                Err(e) => format!("cannot be read: {e}"),
            };
            problems.push(Error::new(
                ErrorKind::Load,
                &rule.source,
                format!(
                    "rule `{}`: its `docs.bad` example {problem} (a rule must fire on its own bad \
                     example; `winguard test-rules` shows every case)",
                    rule.name
                ),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(Errors(problems));
    }
    Ok(set)
}

/// Tests every rule of `dir` against its documented examples and the fixtures under
/// `fixtures/NAME/`. Rules that don't load are the error; each case's outcome is in the list.
pub fn test_rules(dir: &Path, fixtures: &Path) -> Result<Vec<RuleCase>, Errors> {
    let dirs = [dir.to_path_buf()];
    let files = RuleFiles { dirs: &dirs };
    let mut own = RuleSet::default();
    own.add_dir(dir, registry()).map_err(Errors)?;
    if own.rules.is_empty() {
        return Err(Error::new(
            ErrorKind::Load,
            dir.display().to_string(),
            "no rule file (*.yaml) here",
        )
        .into());
    }
    let mut cases = Vec::new();
    for rule in &own.rules {
        let name = rule.name.as_str();
        let mut case = |case: String, failure: Option<String>| {
            cases.push(RuleCase {
                rule: name.to_string(),
                case,
                failure,
            })
        };
        match files.policy(rule.docs.config.as_deref(), "docs.config") {
            Ok(policy) => {
                case(
                    "docs.bad".into(),
                    match fires(&policy, "docs.bad", &rule.docs.bad, name) {
                        Ok(m) if m.is_empty() => Some("does not fire".into()),
                        Ok(_) => None,
                        Err(e) => Some(e),
                    },
                );
                case(
                    "docs.good".into(),
                    match fires(&policy, "docs.good", &rule.docs.good, name) {
                        Ok(m) => m.first().map(|m| format!("fires: {m}")),
                        Err(e) => Some(e),
                    },
                );
            }
            Err(e) => case("docs.config".into(), Some(e)),
        }
        let fixture_dir = fixtures.join(name);
        let Ok(entries) = std::fs::read_dir(&fixture_dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
            .collect();
        paths.sort();
        for path in paths {
            let shown = path.display().to_string();
            let failure = fixture_failure(&files, name, &path);
            case(shown, failure);
        }
    }
    Ok(cases)
}

/// What is wrong with one fixture of `rule`; `None` when it holds.
fn fixture_failure(files: &RuleFiles<'_>, rule: &str, path: &Path) -> Option<String> {
    let file_name = path.file_name()?.to_string_lossy().into_owned();
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return Some(format!("cannot read: {e}")),
    };
    if let Some(suffix) = file_name.strip_prefix("fixed-") {
        let fail_path = path.with_file_name(format!("fail-{suffix}"));
        let fail_text = match std::fs::read_to_string(&fail_path) {
            Ok(t) => t,
            Err(_) => return Some(format!("no fail-{suffix} beside it")),
        };
        return fixed_failure(files, rule, &shown, &fail_text, &text).err();
    }
    let expect_fire = if file_name.starts_with("fail-") {
        true
    } else if file_name.starts_with("pass-") {
        false
    } else {
        return Some("a fixture's name starts with fail-, pass- or fixed-".into());
    };
    let policy = match files.policy(fixture_config(&text), &shown) {
        Ok(p) => p,
        Err(e) => return Some(e),
    };
    match fires(&policy, &shown, &text, rule) {
        Err(e) => Some(e),
        Ok(m) if expect_fire && m.is_empty() => Some("does not fire".into()),
        Ok(m) if !expect_fire && !m.is_empty() => Some(format!("fires: {}", m[0])),
        Ok(_) => None,
    }
}

/// Applying `rule`'s fixes to `fail_text` must give `fixed_text`'s objects and silence the rule.
fn fixed_failure(
    files: &RuleFiles<'_>,
    rule: &str,
    shown: &str,
    fail_text: &str,
    fixed_text: &str,
) -> Result<(), String> {
    let policy = files.policy(fixture_config(fail_text), shown)?;
    let original = objects_of(shown, fail_text)?;
    let mut objects = original.clone();
    let mut fixed_any = false;
    for (object, found) in objects
        .iter_mut()
        .zip(findings_of(&policy, &original, rule))
    {
        let patches: Vec<&[json_patch::PatchOperation]> = found
            .iter()
            .filter_map(|f| f.fix.as_ref())
            .map(|f| f.patch.as_slice())
            .collect();
        fixed_any |= !patches.is_empty();
        patch::apply_all(object, patches);
    }
    if !fixed_any {
        return Err("the rule offers no fix on the fail- fixture".into());
    }
    if objects != objects_of(shown, fixed_text)? {
        return Err(format!(
            "the fixes give another result: {}",
            objects
                .iter()
                .map(|o| o.to_string())
                .collect::<Vec<_>>()
                .join(" --- ")
        ));
    }
    if let Some(still) = findings_of(&policy, &objects, rule)
        .into_iter()
        .flatten()
        .next()
    {
        return Err(format!("still fires after the fix: {}", still.message));
    }
    Ok(())
}
