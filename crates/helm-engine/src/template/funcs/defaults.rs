//! Sprig's defaults and flow functions (`defaults.go`): `default`, `empty`, `coalesce`, `ternary`.

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["default"], |_, a| {
        let d = arg(&a, 0)?;
        Ok(match a.get(1) {
            Some(v) if !empty(v) => v.clone(),
            _ => d,
        })
    }),
    (&["empty"], |_, a| {
        Ok(Value::Bool(empty(
            &a.first().cloned().unwrap_or(Value::Nil),
        )))
    }),
    (&["coalesce"], |_, a| {
        Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil))
    }),
    (&["all"], |_, a| {
        Ok(Value::Bool(a.iter().all(|v| !empty(v))))
    }),
    (&["any"], |_, a| {
        Ok(Value::Bool(a.iter().any(|v| !empty(v))))
    }),
    (&["ternary"], |_, a| {
        Ok(if arg(&a, 2)?.truthy() {
            arg(&a, 0)?
        } else {
            arg(&a, 1)?
        })
    }),
];
