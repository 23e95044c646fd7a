//! Testing rules, as `kyverno test` tests policies: each rule of a directory against its own
//! documented examples (`docs.bad` must fire it, `docs.good` must not, under `docs.config`) and
//! its fixtures (`NAME/fail-*.yaml` must fire it, `NAME/pass-*.yaml` must not, `NAME/fixed-*.yaml`
//! is the `fail-*` of the same suffix after the rule's fixes; a fixture's first line may be
//! `# config: {…}`). These are the conventions of the built-in rules' own tests, so
//! `winguard test-rules rules --fixtures testdata/rules` runs them.
//!
//! A case runs the engine on the text's objects under a policy of its own config; the rules are
//! compiled once and handed from one config's policy to the next ([`Policies`]). The engine is
//! run directly, not through the lint pipeline (a layer above): an example is one plain input.

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

/// One policy at a time over one compiled rule set: a case under another config takes the
/// rules back from the policy it had and builds the next.
struct Policies {
    current: Option<(Option<String>, Policy)>,
    spare: Option<RuleSet>,
}

impl Policies {
    fn new(rules: RuleSet) -> Self {
        Policies {
            current: None,
            spare: Some(rules),
        }
    }

    /// The policy of `config_text` (named `config_name` in its errors), or why it is refused.
    fn get(&mut self, config_text: Option<&str>, config_name: &str) -> Result<&Policy, String> {
        if matches!(&self.current, Some((c, _)) if c.as_deref() == config_text) {
            return Ok(&self.current.as_ref().expect("just matched").1);
        }
        let rules = self.take_rules();
        let config = match config_text.map(|t| Config::parse(t, config_name)) {
            Some(Err(e)) => {
                self.spare = Some(rules);
                return Err(e.to_string());
            }
            Some(Ok(c)) => c,
            None => Config::default(),
        };
        match Policy::with_rules(rules, config) {
            Ok(policy) => {
                let current = self
                    .current
                    .insert((config_text.map(str::to_string), policy));
                Ok(&current.1)
            }
            Err((rules, e)) => {
                self.spare = Some(rules);
                Err(e.to_string())
            }
        }
    }

    fn take_rules(&mut self) -> RuleSet {
        match self.current.take() {
            Some((_, policy)) => policy.into_rules(),
            None => self.spare.take().unwrap_or_default(),
        }
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

/// The messages of `rule`'s findings on `text` under `policy`.
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

/// A rule's documented examples, owned (the policy holding the rule is rebuilt between cases).
struct Examples {
    name: String,
    source: String,
    bad: String,
    good: String,
    config: Option<String>,
}

fn examples(rules: &[crate::rules::Rule]) -> Vec<Examples> {
    rules
        .iter()
        .map(|r| Examples {
            name: r.name.clone(),
            source: r.source.clone(),
            bad: r.docs.bad.clone(),
            good: r.docs.good.clone(),
            config: r.docs.config.clone(),
        })
        .collect()
}

/// The built-in rules and those of `dirs`, each of the latter checked to fire on its own
/// `docs.bad` example: a rule that doesn't is an error at its file, so a broken custom rule is
/// found when it is loaded, not when it silently passes everything.
pub fn load_checked(dirs: &[PathBuf]) -> Result<RuleSet, Errors> {
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
    let own = examples(&set.rules[builtin..]);
    let mut policies = Policies::new(set);
    for rule in &own {
        let problem = match policies.get(rule.config.as_deref(), "docs.config") {
            Err(message) => format!("its `docs.config`: {message}"),
            Ok(policy) => match fires(policy, "docs.bad", &rule.bad, &rule.name) {
                Ok(messages) if !messages.is_empty() => continue,
                Ok(_) => "its `docs.bad` example does not fire it".to_string(),
                Err(e) => format!("its `docs.bad` example cannot be read: {e}"),
            },
        };
        problems.push(Error::new(
            ErrorKind::Load,
            &rule.source,
            format!(
                "rule `{}`: {problem} (a rule must fire on its own bad example; `winguard \
                 test-rules` shows every case)",
                rule.name
            ),
        ));
    }
    if !problems.is_empty() {
        return Err(Errors(problems));
    }
    Ok(policies.take_rules())
}

/// Tests every rule of `dir` against its documented examples and the fixtures under
/// `fixtures/NAME/`. Unlike `--rules`, the directory may redefine built-in rules (so `rules/`
/// itself can be tested): the built-in ones it doesn't define are loaded beside it. Rules that
/// don't load are the error; each case's outcome is in the list.
pub fn test_rules(dir: &Path, fixtures: &Path) -> Result<Vec<RuleCase>, Errors> {
    let mut set = RuleSet::default();
    set.add_dir(dir, registry()).map_err(Errors)?;
    if set.rules.is_empty() {
        return Err(Error::new(
            ErrorKind::Load,
            dir.display().to_string(),
            "no rule file (*.yaml) here",
        )
        .into());
    }
    let own = examples(&set.rules);
    for rule in builtin_rules()?.rules {
        if set.get(&rule.name).is_none() {
            set.rules.push(rule);
        }
    }
    let mut policies = Policies::new(set);
    let mut cases = Vec::new();
    let mut case = |rule: &str, case: String, failure: Option<String>| {
        cases.push(RuleCase {
            rule: rule.to_string(),
            case,
            failure,
        })
    };
    for rule in &own {
        let name = rule.name.as_str();
        match policies.get(rule.config.as_deref(), "docs.config") {
            Ok(policy) => {
                let bad = match fires(policy, "docs.bad", &rule.bad, name) {
                    Ok(m) if m.is_empty() => Some("does not fire".into()),
                    Ok(_) => None,
                    Err(e) => Some(e),
                };
                let good = match fires(policy, "docs.good", &rule.good, name) {
                    Ok(m) => m.first().map(|m| format!("fires: {m}")),
                    Err(e) => Some(e),
                };
                case(name, "docs.bad".into(), bad);
                case(name, "docs.good".into(), good);
            }
            Err(e) => case(name, "docs.config".into(), Some(e)),
        }
    }
    for rule in &own {
        let Ok(entries) = std::fs::read_dir(fixtures.join(&rule.name)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
            .collect();
        paths.sort();
        for path in paths {
            let failure = fixture_failure(&mut policies, &rule.name, &path);
            case(&rule.name, path.display().to_string(), failure);
        }
    }
    Ok(cases)
}

/// What is wrong with one fixture of `rule`; `None` when it holds.
fn fixture_failure(policies: &mut Policies, rule: &str, path: &Path) -> Option<String> {
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
        return fixed_failure(policies, rule, &shown, &fail_text, &text).err();
    }
    let expect_fire = if file_name.starts_with("fail-") {
        true
    } else if file_name.starts_with("pass-") {
        false
    } else {
        return Some("a fixture's name starts with fail-, pass- or fixed-".into());
    };
    let policy = match policies.get(fixture_config(&text), &shown) {
        Ok(p) => p,
        Err(e) => return Some(e),
    };
    match fires(policy, &shown, &text, rule) {
        Err(e) => Some(e),
        Ok(m) if expect_fire && m.is_empty() => Some("does not fire".into()),
        Ok(m) if !expect_fire && !m.is_empty() => Some(format!("fires: {}", m[0])),
        Ok(_) => None,
    }
}

/// Applying `rule`'s fixes to `fail_text` must give `fixed_text`'s objects and silence the rule.
fn fixed_failure(
    policies: &mut Policies,
    rule: &str,
    shown: &str,
    fail_text: &str,
    fixed_text: &str,
) -> Result<(), String> {
    let policy = policies.get(fixture_config(fail_text), shown)?;
    let original = objects_of(shown, fail_text)?;
    let mut objects = original.clone();
    let mut fixed_any = false;
    for (object, found) in objects.iter_mut().zip(findings_of(policy, &original, rule)) {
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
    if let Some(still) = findings_of(policy, &objects, rule)
        .into_iter()
        .flatten()
        .next()
    {
        return Err(format!("still fires after the fix: {}", still.message));
    }
    Ok(())
}
