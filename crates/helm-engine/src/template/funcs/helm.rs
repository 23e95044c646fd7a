//! Helm's own functions (`pkg/engine/funcs.go`): `include`, `tpl`, `required`, `fail`, YAML, JSON and TOML, `lookup`.

use super::*;
use crate::template::yaml;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["include"], |c, a| {
        let name = str_arg(&a, 0)?;
        let data = a.get(1).cloned().unwrap_or(Value::Nil);
        let pos = c.pos;
        c.exec.include_value(&name, &data, pos)
    }),
    (&["tpl"], |c, a| {
        let text = str_arg(&a, 0)?;
        let data = a.get(1).cloned().unwrap_or(Value::Nil);
        let pos = c.pos;
        c.exec.tpl(&text, &data, pos).map(Value::from)
    }),
    (&["required"], |_, a| {
        let message = string_arg(&a, 0)?;
        let v = a.get(1).cloned().unwrap_or(Value::Nil);
        match &v {
            Value::Nil => Err(Failure::Fail(message)),
            Value::Str(s) if s.is_empty() => Err(Failure::Fail(message)),
            _ => Ok(v),
        }
    }),
    (&["fail"], |_, a| Err(Failure::Fail(string_arg(&a, 0)?))),
    (&["toYaml"], |_, a| {
        let v = arg(&a, 0)?.to_data();
        Ok(Value::from(
            yaml::to_yaml(&v).trim_end_matches('\n').to_string(),
        ))
    }),
    (&["mustToYaml"], |_, a| {
        Ok(Value::from(yaml::to_yaml(&arg(&a, 0)?.to_data())))
    }),
    (&["toYamlPretty"], |_, a| {
        Ok(Value::from(
            yaml::to_yaml(&arg(&a, 0)?.to_data())
                .trim_end_matches('\n')
                .to_string(),
        ))
    }),
    (&["fromYaml"], |_, a| Ok(from_yaml_map(&string_arg(&a, 0)?))),
    (&["fromYamlArray"], |_, a| {
        Ok(from_yaml_list(&string_arg(&a, 0)?))
    }),
    (&["toJson", "mustToJson"], |_, a| {
        Ok(Value::from(to_json(&arg(&a, 0)?)))
    }),
    (&["toPrettyJson", "mustToPrettyJson"], |_, a| {
        Ok(Value::from(to_pretty_json(&arg(&a, 0)?)))
    }),
    (&["toRawJson", "mustToRawJson"], |_, a| {
        Ok(Value::from(arg(&a, 0)?.to_json().to_string()))
    }),
    (&["fromJson", "mustFromJson"], |_, a| {
        let text = string_arg(&a, 0)?;
        // Go's json.Unmarshal: every number a float64.
        Ok(
            match serde_json::from_str::<serde_json::Value>(&text).map(floats) {
                Ok(v @ serde_json::Value::Object(_)) => Value::from_json(&v),
                Ok(_) => error_map("json: cannot unmarshal into a map"),
                Err(e) => error_map(&e.to_string()),
            },
        )
    }),
    (&["fromJsonArray"], |_, a| {
        let text = string_arg(&a, 0)?;
        Ok(
            match serde_json::from_str::<serde_json::Value>(&text).map(floats) {
                Ok(v @ serde_json::Value::Array(_)) => Value::from_json(&v),
                Ok(_) => Value::list(vec![Value::from("json: cannot unmarshal into a list")]),
                Err(e) => Value::list(vec![Value::from(e.to_string())]),
            },
        )
    }),
    (&["toToml", "mustToToml"], {
        |_, a| Ok(Value::from(yaml::to_toml(&arg(&a, 0)?.to_data())))
    }),
    (&["fromToml"], |_, a| {
        Ok(yaml::from_toml(&string_arg(&a, 0)?))
    }),
    (&["lookup"], |_, _| Ok(Value::map(BTreeMap::new()))),
];
