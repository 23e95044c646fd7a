//! Sprig's type functions (`reflect.go`): Go's type and kind names.

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["typeOf"], |_, a| Ok(Value::from(arg(&a, 0)?.type_name()))),
    (&["typeIs"], |_, a| {
        Ok(Value::Bool(string_arg(&a, 0)? == arg(&a, 1)?.type_name()))
    }),
    (&["typeIsLike"], |_, a| {
        let t = string_arg(&a, 0)?;
        let actual = arg(&a, 1)?.type_name();
        Ok(Value::Bool(t == actual || t == format!("*{actual}")))
    }),
    (&["kindOf"], |_, a| Ok(Value::from(arg(&a, 0)?.kind_name()))),
    (&["kindIs"], |_, a| {
        Ok(Value::Bool(string_arg(&a, 0)? == arg(&a, 1)?.kind_name()))
    }),
    (&["deepEqual"], |_, a| {
        Ok(Value::Bool(deep_equal(&arg(&a, 0)?, &arg(&a, 1)?)))
    }),
];
