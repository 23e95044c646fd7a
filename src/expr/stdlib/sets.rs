//! Kubernetes' sets library (1.29+): lists as sets.

use super::*;

pub(super) fn register(r: &mut Registry) {
    r.add(
        "sets.contains(list(A), list(A)) -> bool",
        "every item of the second list is in the first",
        |_, a| {
            let first: Vec<Val> = a[0].items()?.collect();
            Ok(Val::Bool(
                a[1].items()?.all(|x| first.iter().any(|y| equals(&x, y))),
            ))
        },
    );
    r.add(
        "sets.intersects(list(A), list(A)) -> bool",
        "the lists share an item",
        |_, a| {
            let first: Vec<Val> = a[0].items()?.collect();
            Ok(Val::Bool(
                a[1].items()?.any(|x| first.iter().any(|y| equals(&x, y))),
            ))
        },
    );
    r.add(
        "sets.equivalent(list(A), list(A)) -> bool",
        "the lists hold the same items (ignoring order and repeats)",
        |_, a| {
            let (x, y): (Vec<Val>, Vec<Val>) = (a[0].items()?.collect(), a[1].items()?.collect());
            let within = |p: &[Val], q: &[Val]| p.iter().all(|i| q.iter().any(|j| equals(i, j)));
            Ok(Val::Bool(within(&x, &y) && within(&y, &x)))
        },
    );
}
