//! Sprig's list functions (`list.go`).

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["list", "tuple"], |_, a| Ok(Value::list(a.into_vec()))),
    (&["append", "push", "mustAppend", "mustPush"], |_, a| {
        let mut l = to_list_strict(&arg(&a, 0)?, "append")?;
        l.push(arg(&a, 1)?);
        Ok(Value::list(l))
    }),
    (&["prepend", "mustPrepend"], |_, a| {
        let mut l = to_list_strict(&arg(&a, 0)?, "prepend")?;
        l.insert(0, arg(&a, 1)?);
        Ok(Value::list(l))
    }),
    (&["first", "mustFirst"], {
        |_, a| Ok(to_list(&arg(&a, 0)?).first().cloned().unwrap_or(Value::Nil))
    }),
    (&["last", "mustLast"], {
        |_, a| Ok(to_list(&arg(&a, 0)?).last().cloned().unwrap_or(Value::Nil))
    }),
    (&["rest", "mustRest"], |_, a| {
        let l = to_list(&arg(&a, 0)?);
        Ok(if l.is_empty() {
            Value::Nil
        } else {
            Value::list(l[1..].to_vec())
        })
    }),
    (&["initial", "mustInitial"], |_, a| {
        let l = to_list(&arg(&a, 0)?);
        Ok(if l.is_empty() {
            Value::Nil
        } else {
            Value::list(l[..l.len() - 1].to_vec())
        })
    }),
    (&["reverse", "mustReverse"], |_, a| {
        let mut l = to_list(&arg(&a, 0)?);
        l.reverse();
        Ok(Value::list(l))
    }),
    (&["uniq", "mustUniq"], |_, a| {
        let mut out: Vec<Value> = Vec::new();
        for v in to_list(&arg(&a, 0)?) {
            if !out.iter().any(|o| deep_equal(o, &v)) {
                out.push(v);
            }
        }
        Ok(Value::list(out))
    }),
    (&["without", "mustWithout"], |_, a| {
        let l = to_list(&arg(&a, 0)?);
        let drop = &a[1..];
        Ok(Value::list(
            l.into_iter()
                .filter(|v| !drop.iter().any(|d| deep_equal(d, v)))
                .collect(),
        ))
    }),
    (&["has", "mustHas"], |_, a| {
        let needle = arg(&a, 0)?;
        Ok(Value::Bool(
            to_list(&arg(&a, 1)?).iter().any(|v| deep_equal(v, &needle)),
        ))
    }),
    (&["compact", "mustCompact"], |_, a| {
        Ok(Value::list(
            to_list(&arg(&a, 0)?)
                .into_iter()
                .filter(|v| !empty(v))
                .collect(),
        ))
    }),
    (&["concat"], |_, a| {
        Ok(Value::list(a.iter().flat_map(to_list).collect()))
    }),
    (&["until"], |_, a| range_list(0, to_int(&arg(&a, 0)?), 1)),
    (&["untilStep"], |_, a| {
        range_list(
            to_int(&arg(&a, 0)?),
            to_int(&arg(&a, 1)?),
            to_int(&arg(&a, 2)?),
        )
    }),
    (&["seq"], seq),
    (&["chunk", "mustChunk"], |_, a| {
        let size = to_int(&arg(&a, 0)?);
        let list = match arg(&a, 1)? {
            Value::List(l) => l,
            other => return err(format!("Cannot chunk type {}", other.kind_name())),
        };
        // Sprig divides by the size: Go's integer division by zero, or a negative size,
        // is a runtime error there.
        let Ok(size) = usize::try_from(size) else {
            return err(format!(
                "runtime error: makeslice: len out of range ({size})"
            ));
        };
        if size == 0 {
            return err("runtime error: integer divide by zero");
        }
        Ok(Value::list(
            list.chunks(size).map(|c| Value::list(c.to_vec())).collect(),
        ))
    }),
    (&["mustSlice"], slice),
];
