//! Kubernetes' and cel-go's lists libraries (`isSorted`, `sum`, `indexOf`, `slice`, …).

use super::*;

pub(super) fn register(r: &mut Registry) {
    kubernetes_lists(r);
    extended_lists(r);
}

/// Kubernetes' lists library (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`).
fn kubernetes_lists(r: &mut Registry) {
    r.add(
        "list(A).isSorted() -> bool",
        "whether the items are in ascending order",
        |_, a| {
            let items: Vec<Val> = a[0].items()?.collect();
            for w in items.windows(2) {
                if compare("isSorted", &w[0], &w[1])? == Ordering::Greater {
                    return Ok(Val::Bool(false));
                }
            }
            Ok(Val::Bool(true))
        },
    );
    r.add(
        "list(A).sum() -> A",
        "the sum of the numbers (0 for an empty list)",
        |_, a| {
            let mut total: Option<Val> = None;
            for item in a[0].items()? {
                total = Some(match total {
                    None => item,
                    Some(t) => match (t.kind(), item.kind()) {
                        (Kind::Int(x), Kind::Int(y)) => {
                            Val::Int(x.checked_add(y).ok_or_else(|| err("integer overflow"))?)
                        }
                        (Kind::Uint(x), Kind::Uint(y)) => {
                            Val::Uint(x.checked_add(y).ok_or_else(|| err("integer overflow"))?)
                        }
                        (Kind::Double(x), Kind::Double(y)) => Val::Double(x + y),
                        _ => return Err(err("sum of values that are not numbers of one kind")),
                    },
                });
            }
            Ok(total.unwrap_or(Val::Int(0)))
        },
    );
    for sig in ["list(A).min() -> A", "list(A).max() -> A"] {
        r.add(
            sig,
            "the least (greatest) item; an error for an empty list",
            |c, a| {
                let want = if c.name == "min" {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                let mut best: Option<Val> = None;
                for item in a[0].items()? {
                    best = Some(match best {
                        Some(b) if compare(c.name, &item, &b)? != want => b,
                        _ => item,
                    });
                }
                best.ok_or_else(|| err(format!("{}() of an empty list", c.name)))
            },
        );
    }
    for sig in ["list(A).indexOf(A) -> int", "list(A).lastIndexOf(A) -> int"] {
        r.add(
            sig,
            "the index of the first (last) equal item, or -1",
            |c, a| {
                let items: Vec<Val> = a[0].items()?.collect();
                let mut found = items
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| equals(v, &a[1]))
                    .map(|(i, _)| i as i64);
                Ok(Val::Int(
                    if c.name == "indexOf" {
                        found.next()
                    } else {
                        found.next_back()
                    }
                    .unwrap_or(-1),
                ))
            },
        );
    }
}

/// cel-go's lists extension (`reverse`, `slice`, `sort`, `first`, `last`, `distinct`, `flatten`, …).
fn extended_lists(r: &mut Registry) {
    r.add(
        "list(A).reverse() -> list(A)",
        "the items in reverse order",
        |_, a| {
            let mut items: Vec<Val> = a[0].items()?.collect();
            items.reverse();
            Ok(Val::list(items))
        },
    );
    r.add(
        "list(A).slice(int, int) -> list(A)",
        "the items in [start, end)",
        |_, a| {
            let items: Vec<Val> = a[0].items()?.collect();
            let (from, to) = (int(&a[1]), int(&a[2]));
            if from < 0 || to < from || to as usize > items.len() {
                return Err(err(format!(
                    "cannot slice({from}, {to}) a list of length {}",
                    items.len()
                )));
            }
            Ok(Val::list(items[from as usize..to as usize].to_vec()))
        },
    );
    r.add(
        "list(A).sort() -> list(A)",
        "the items in ascending order (numbers, strings or bools)",
        |_, a| {
            let mut items: Vec<Val> = a[0].items()?.collect();
            let mut failed = None;
            items.sort_by(|x, y| {
                compare("sort", x, y).unwrap_or_else(|e| {
                    failed = Some(e);
                    Ordering::Equal
                })
            });
            match failed {
                Some(e) => Err(e),
                None => Ok(Val::list(items)),
            }
        },
    );
    for sig in [
        "list(A).first() -> optional(A)",
        "list(A).last() -> optional(A)",
    ] {
        r.add(
            sig,
            "the first (last) item, or none for an empty list",
            |c, a| {
                let n = a[0].size().unwrap_or(0) as usize;
                let at = if c.name == "first" {
                    0
                } else {
                    n.wrapping_sub(1)
                };
                Ok(Val::optional(a[0].at(at)))
            },
        );
    }
    r.add(
        "list(A).distinct() -> list(A)",
        "the items with later duplicates removed",
        |_, a| {
            let mut out: Vec<Val> = Vec::new();
            for item in a[0].items()? {
                if !out.iter().any(|o| equals(o, &item)) {
                    out.push(item);
                }
            }
            Ok(Val::list(out))
        },
    );
    r.add(
        "list(dyn).flatten() -> list(dyn)",
        "the items of the items, one level",
        |_, a| {
            let mut out = Vec::new();
            for item in a[0].items()? {
                match item.kind() {
                    Kind::List => out.extend(item.items()?),
                    _ => out.push(item),
                }
            }
            Ok(Val::list(out))
        },
    );
}
