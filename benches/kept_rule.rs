//! `WINGUARD_BENCH_RULE=NAME`, shared by the benches that take it: every rule but NAME off (`none`:
//! every rule off), so that under callgrind one rule's instructions are the difference from the
//! floor.

use winguard::config::{Config, Level};
use winguard::rules::RuleSet;

/// `WINGUARD_BENCH_RULE`: `None` when unset, `Some(None)` for `none`, else the rule's name.
pub fn from_env() -> Option<Option<String>> {
    std::env::var("WINGUARD_BENCH_RULE")
        .ok()
        .map(|kept| Some(kept).filter(|k| k != "none"))
}

/// Turns every rule of `rules` off in `config` but `kept` (none kept: every rule off).
pub fn keep_only(rules: &RuleSet, config: &mut Config, kept: Option<&str>) {
    if let Some(name) = kept {
        assert!(
            rules.rules.iter().any(|r| r.name == name),
            "WINGUARD_BENCH_RULE: no rule `{name}`"
        );
    }
    for r in rules.rules.iter().filter(|r| Some(r.name.as_str()) != kept) {
        config.rules.insert(r.name.clone(), Level::Off);
    }
}
