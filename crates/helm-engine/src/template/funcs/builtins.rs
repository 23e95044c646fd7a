//! Go's `text/template` built-ins (`and` and `or` are evaluated lazily by the executor).

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["not"], |_, a| Ok(Value::Bool(!arg(&a, 0)?.truthy()))),
    (&["len"], len),
    (&["index"], index),
    (&["slice"], slice),
    (&["print"], |_, a| Ok(Value::from(go_print(&a)))),
    (&["println"], |_, a| {
        let parts: Vec<String> = a.iter().map(Value::to_print_inner).collect();
        Ok(Value::from(parts.join(" ") + "\n"))
    }),
    (&["eq"], eq),
    (&["ne"], |c, a| Ok(Value::Bool(!eq(c, a)?.truthy()))),
    (&["lt"], |_, a| compare(&a, |o| o.is_lt())),
    (&["le"], |_, a| compare(&a, |o| o.is_le())),
    (&["gt"], |_, a| compare(&a, |o| o.is_gt())),
    (&["ge"], |_, a| compare(&a, |o| o.is_ge())),
    (&["html"], |_, a| {
        Ok(Value::from(html_escape(&go_print(&a))))
    }),
    (&["js"], |_, a| Ok(Value::from(js_escape(&go_print(&a))))),
    (&["urlquery"], |_, a| {
        Ok(Value::from(query_escape(&go_print(&a))))
    }),
    // Go's `call` takes a function value; template data here holds none.
    (&["call"], |_, a| match arg(&a, 0)? {
        Value::Nil => err("call of nil"),
        other => err(format!("non-function of type {}", other.type_name())),
    }),
];
