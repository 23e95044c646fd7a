//! Sprig's random values (`crypto.go`, `strings.go`): their output differs run to run; tests compare shapes.

use super::*;
use crate::template::random;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["uuidv4"], |_, _| Ok(Value::from(random::uuid_v4()))),
    (&["randAlphaNum"], |_, a| {
        Ok(Value::from(random::string(
            to_int(&arg(&a, 0)?),
            random::ALPHANUM,
        )))
    }),
    (&["randAlpha"], |_, a| {
        Ok(Value::from(random::string(
            to_int(&arg(&a, 0)?),
            random::ALPHA,
        )))
    }),
    (&["randNumeric"], |_, a| {
        Ok(Value::from(random::string(
            to_int(&arg(&a, 0)?),
            random::NUMERIC,
        )))
    }),
    (&["randAscii"], |_, a| {
        Ok(Value::from(random::string(
            to_int(&arg(&a, 0)?),
            random::ASCII,
        )))
    }),
    (&["randInt"], |_, a| {
        Ok(Value::Int(random::int_between(
            to_int(&arg(&a, 0)?),
            to_int(&arg(&a, 1)?),
        )))
    }),
    (&["randBytes"], |_, a| {
        use base64::Engine;
        let n = to_int(&arg(&a, 0)?).clamp(0, 1 << 20) as usize;
        Ok(Value::from(
            base64::engine::general_purpose::STANDARD.encode(random::bytes(n)),
        ))
    }),
    (&["shuffle"], |_, a| {
        let s = str_arg(&a, 0)?;
        let mut chars: Vec<char> = s.chars().collect();
        for i in (1..chars.len()).rev() {
            let j = random::int_between(0, i as i64 + 1) as usize;
            chars.swap(i, j);
        }
        Ok(Value::from(chars.into_iter().collect::<String>()))
    }),
];
