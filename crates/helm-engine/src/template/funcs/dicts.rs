//! Sprig's dictionaries (`dict.go`): maps of strings to values.

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["dict"], |_, a| {
        let mut m = BTreeMap::new();
        for pair in a.chunks(2) {
            let key = strval(&pair[0]);
            m.insert(key, pair.get(1).cloned().unwrap_or(Value::Nil));
        }
        Ok(Value::map(m))
    }),
    (&["get"], |c, a| {
        let m = c.map_param(&a, 0)?;
        let key = string_arg(&a, 1)?;
        let found = m.borrow().get(&key).cloned();
        Ok(found.unwrap_or_else(|| Value::from("")))
    }),
    (&["set"], |_, a| {
        // In place, as Go's maps are references: every holder of the dict sees the change.
        let m = map_arg(&a, 0)?;
        let value = arg(&a, 2)?;
        if value.holds(&m) {
            return err("set: a dict cannot be put inside itself");
        }
        m.borrow_mut().insert(string_arg(&a, 1)?, value);
        Ok(Value::Map(m))
    }),
    (&["unset"], |_, a| {
        let m = map_arg(&a, 0)?;
        m.borrow_mut().remove(&string_arg(&a, 1)?);
        Ok(Value::Map(m))
    }),
    (&["hasKey"], |c, a| {
        let key = string_arg(&a, 1)?;
        Ok(Value::Bool(c.map_param(&a, 0)?.borrow().contains_key(&key)))
    }),
    // Every argument after the key is a `map[string]interface{}` parameter: anything else fails
    // as Go's argument conversion does, a nil literal is an empty map.
    (&["pluck"], |c, a| {
        let key = string_arg(&a, 0)?;
        let mut found = Vec::new();
        for i in 1..a.len() {
            if let Some(v) = c.map_param(&a, i)?.borrow().get(&key) {
                found.push(v.clone());
            }
        }
        Ok(Value::list(found))
    }),
    (&["keys"], |c, a| {
        let mut keys: Vec<Value> = Vec::new();
        for i in 0..a.len() {
            keys.extend(
                c.map_param(&a, i)?
                    .borrow()
                    .keys()
                    .map(|k| Value::from(k.as_str())),
            );
        }
        Ok(Value::list(keys))
    }),
    (&["values"], |c, a| {
        Ok(Value::list(
            c.map_param(&a, 0)?.borrow().values().cloned().collect(),
        ))
    }),
    (&["pick"], |c, a| {
        let m = c.map_param(&a, 0)?;
        let wanted: Vec<String> = a[1..].iter().map(strval).collect();
        let picked = m
            .borrow()
            .iter()
            .filter(|(k, _)| wanted.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Value::map(picked))
    }),
    (&["omit"], |c, a| {
        let m = c.map_param(&a, 0)?;
        let dropped: Vec<String> = a[1..].iter().map(strval).collect();
        let kept = m
            .borrow()
            .iter()
            .filter(|(k, _)| !dropped.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Value::map(kept))
    }),
    (&["merge", "mustMerge"], |_, a| merge(a, false)),
    (&["mergeOverwrite", "mustMergeOverwrite"], |_, a| {
        merge(a, true)
    }),
    (&["deepCopy", "mustDeepCopy"], |_, a| {
        Ok(arg(&a, 0)?.deep_copy())
    }),
    (&["dig"], |_, a| {
        if a.len() < 3 {
            return err("dig needs at least three arguments");
        }
        // Sprig's type assertions (`ps[i].(string)`, `….(map[string]interface{})`) panic on
        // anything else, which Helm reports as the call's error.
        let conversion = |v: &Value, want: &str| {
            let found = match v {
                Value::Nil => "nil".to_string(),
                v => v.type_name(),
            };
            err(format!(
                "interface conversion: interface {{}} is {found}, not {want}"
            ))
        };
        let default = a[a.len() - 2].clone();
        let mut cur = a[a.len() - 1].clone();
        let keys = &a[..a.len() - 2];
        if let Some(bad) = keys.iter().find(|k| !matches!(k, Value::Str(_))) {
            if !matches!(cur, Value::Map(_)) {
                return conversion(&cur, "map[string]interface {}");
            }
            return conversion(bad, "string");
        }
        for key in keys {
            let next = match &cur {
                Value::Map(m) => m.borrow().get(&strval(key)).cloned(),
                other => return conversion(other, "map[string]interface {}"),
            };
            cur = match next {
                Some(v) => v,
                None => return Ok(default),
            };
        }
        Ok(cur)
    }),
];
