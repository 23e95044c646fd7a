//! Sprig's conversions (`conversion.go`, `numeric.go`): Go's number and string rules.

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["toString"], |_, a| Ok(Value::from(strval(&arg(&a, 0)?)))),
    (&["toStrings"], |_, a| {
        Ok(Value::list(
            to_list(&arg(&a, 0)?)
                .iter()
                .map(|v| Value::from(strval(v)))
                .collect(),
        ))
    }),
    (&["atoi"], |_, a| {
        Ok(Value::Int(
            string_arg(&a, 0)?.trim().parse::<i64>().unwrap_or(0),
        ))
    }),
    (&["int"], |_, a| Ok(Value::Int(to_int(&arg(&a, 0)?)))),
    (&["int64"], |_, a| Ok(Value::Int64(to_int(&arg(&a, 0)?)))),
    (&["float64"], |_, a| {
        Ok(Value::Float(to_float(&arg(&a, 0)?)))
    }),
    (&["toDecimal"], |_, a| {
        Ok(Value::Int64(
            i64::from_str_radix(&strval(&arg(&a, 0)?), 8).unwrap_or(0),
        ))
    }),
];
