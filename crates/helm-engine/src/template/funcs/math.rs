//! Sprig's math (`numeric.go`): integer math returns int64, the `f` forms float64.

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["add"], |_, a| {
        Ok(Value::Int64(
            a.iter().map(to_int).fold(0i64, i64::wrapping_add),
        ))
    }),
    (&["add1"], |_, a| {
        Ok(Value::Int64(to_int(&arg(&a, 0)?).wrapping_add(1)))
    }),
    (&["sub"], |_, a| {
        Ok(Value::Int64(
            to_int(&arg(&a, 0)?).wrapping_sub(to_int(&arg(&a, 1)?)),
        ))
    }),
    (&["mul"], |_, a| {
        Ok(Value::Int64(
            a.iter().map(to_int).fold(1i64, i64::wrapping_mul),
        ))
    }),
    (&["div"], |_, a| {
        let d = to_int(&arg(&a, 1)?);
        if d == 0 {
            return err("runtime error: integer divide by zero");
        }
        Ok(Value::Int64(to_int(&arg(&a, 0)?).wrapping_div(d)))
    }),
    (&["mod"], |_, a| {
        let d = to_int(&arg(&a, 1)?);
        if d == 0 {
            return err("runtime error: integer divide by zero");
        }
        Ok(Value::Int64(to_int(&arg(&a, 0)?).wrapping_rem(d)))
    }),
    (&["max"], |_, a| {
        Ok(Value::Int64(a.iter().map(to_int).max().unwrap_or(0)))
    }),
    (&["min"], |_, a| {
        Ok(Value::Int64(a.iter().map(to_int).min().unwrap_or(0)))
    }),
    (&["addf"], |_, a| {
        Ok(Value::Float(a.iter().map(to_float).sum()))
    }),
    (&["add1f"], |_, a| {
        Ok(Value::Float(to_float(&arg(&a, 0)?) + 1.0))
    }),
    (&["subf"], |_, a| {
        let mut it = a.iter().map(to_float);
        let first = it.next().unwrap_or(0.0);
        Ok(Value::Float(it.fold(first, |x, y| x - y)))
    }),
    (&["mulf"], |_, a| {
        Ok(Value::Float(a.iter().map(to_float).product()))
    }),
    (&["divf"], |_, a| {
        let mut it = a.iter().map(to_float);
        let first = it.next().unwrap_or(0.0);
        Ok(Value::Float(it.fold(first, |x, y| x / y)))
    }),
    (&["maxf"], |_, a| {
        Ok(Value::Float(
            a.iter().map(to_float).fold(f64::MIN, f64::max),
        ))
    }),
    (&["minf"], |_, a| {
        Ok(Value::Float(
            a.iter().map(to_float).fold(f64::MAX, f64::min),
        ))
    }),
    (&["floor"], |_, a| {
        Ok(Value::Float(to_float(&arg(&a, 0)?).floor()))
    }),
    (&["ceil"], |_, a| {
        Ok(Value::Float(to_float(&arg(&a, 0)?).ceil()))
    }),
    (&["round"], |_, a| {
        let places = a.get(1).map(to_int).unwrap_or(0);
        let p = 10f64.powi(places as i32);
        let v = to_float(&arg(&a, 0)?) * p;
        // Sprig rounds half away from zero (its `roundOn` is 0.5).
        Ok(Value::Float(v.round() / p))
    }),
    (&["biggest"], |_, a| {
        Ok(Value::Int64(a.iter().map(to_int).max().unwrap_or(0)))
    }),
];
