//! Kubernetes' regex library (`find`, `findAll`): RE2 syntax, a literal pattern compiled
//! once when the rule loads.

use super::*;

pub(super) fn register(r: &mut Registry) {
    r.add_prepared(
        "string.find(string) -> string",
        "the first match of a regular expression, or `''`",
        |c, a| {
            let mut owned = None;
            let re = regex(c, s(&a[1]), &mut owned)?;
            Ok(Val::str(re.find(s(&a[0])).map_or("", |m| m.as_str())))
        },
        Some((1, prepare_regex)),
    );
    r.add_prepared(
        "string.findAll(string) -> list(string)",
        "every match of a regular expression",
        |c, a| {
            let mut owned = None;
            let re = regex(c, s(&a[1]), &mut owned)?;
            Ok(Val::list(
                re.find_iter(s(&a[0]))
                    .map(|m| Val::str(m.as_str()))
                    .collect(),
            ))
        },
        Some((1, prepare_regex)),
    );

    r.add_prepared(
        "string.findAll(string, int) -> list(string)",
        "at most n matches of a regular expression (all for n < 0)",
        |c, a| {
            let mut owned = None;
            let re = regex(c, s(&a[1]), &mut owned)?;
            let n = usize::try_from(int(&a[2])).unwrap_or(usize::MAX);
            Ok(Val::list(
                re.find_iter(s(&a[0]))
                    .take(n)
                    .map(|m| Val::str(m.as_str()))
                    .collect(),
            ))
        },
        Some((1, prepare_regex)),
    );
}
