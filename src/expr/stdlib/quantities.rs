//! Kubernetes' quantity library: exact decimals (`quantity.rs`).

use super::*;

pub(super) fn register(r: &mut Registry) {
    r.add(
        "quantity(string) -> quantity",
        "a Kubernetes quantity (`500m`, `1Gi`, `2e3`); an error when the text is not one",
        |_, a| {
            Quantity::parse(s(&a[0]))
                .map(Val::quantity)
                .ok_or_else(|| err(format!("invalid quantity: {}", s(&a[0]))))
        },
    );
    r.add(
        "isQuantity(string) -> bool",
        "whether the text is a Kubernetes quantity",
        |_, a| Ok(Val::Bool(Quantity::parse(s(&a[0])).is_some())),
    );
    r.add(
        "quantity.asApproximateFloat() -> double",
        "the quantity as a double",
        |_, a| Ok(Val::Double(q(&a[0])?.as_f64())),
    );
    r.add(
        "quantity.isInteger() -> bool",
        "whether the quantity is a whole number that fits in an int",
        |_, a| Ok(Val::Bool(q(&a[0])?.as_i64().is_some())),
    );
    r.add(
        "quantity.asInteger() -> int",
        "the quantity as an int; an error when it is not a whole number that fits",
        |_, a| {
            q(&a[0])?
                .as_i64()
                .map(Val::Int)
                .ok_or_else(|| err("cannot convert value to integer"))
        },
    );
    for sig in ["quantity.sign() -> int", "sign(quantity) -> int"] {
        r.add(sig, "-1, 0 or 1", |_, a| Ok(Val::Int(q(&a[0])?.sign())));
    }
    r.add(
        "quantity.compareTo(quantity) -> int",
        "-1, 0 or 1 as the quantity is less than, equal to or greater than the argument",
        |_, a| {
            Ok(Val::Int(match q(&a[0])?.cmp(&q(&a[1])?) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }))
        },
    );
    r.add(
        "quantity.isLessThan(quantity) -> bool",
        "ordering",
        |_, a| Ok(Val::Bool(q(&a[0])? < q(&a[1])?)),
    );
    r.add(
        "quantity.isGreaterThan(quantity) -> bool",
        "ordering",
        |_, a| Ok(Val::Bool(q(&a[0])? > q(&a[1])?)),
    );
    // `add`/`sub` take a quantity or an int.
    fn operand(v: &Val<'_>) -> Result<Quantity, EvalError> {
        match v.kind() {
            Kind::Int(i) => Ok(Quantity::from_int(i)),
            _ => q(v),
        }
    }
    for sig in [
        "quantity.add(quantity) -> quantity",
        "quantity.add(int) -> quantity",
        "quantity.sub(quantity) -> quantity",
        "quantity.sub(int) -> quantity",
    ] {
        r.add(sig, "the sum (difference), exactly", |c, a| {
            let (x, y) = (q(&a[0])?, operand(&a[1])?);
            let result = if c.name == "add" {
                x.checked_add(y)
            } else {
                x.checked_sub(y)
            };
            result
                .map(Val::quantity)
                .ok_or_else(|| err("quantity out of range"))
        });
    }
}
