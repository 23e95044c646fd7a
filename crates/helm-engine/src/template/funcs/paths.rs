//! Sprig's paths (`functions.go`): Go's `path`, slash-separated; the `os` forms are the same here.

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["base", "osBase"], |_, a| {
        Ok(Value::from(path_base(&string_arg(&a, 0)?)))
    }),
    (&["dir", "osDir"], |_, a| {
        Ok(Value::from(path_dir(&string_arg(&a, 0)?)))
    }),
    (&["ext", "osExt"], |_, a| {
        let p = string_arg(&a, 0)?;
        let base = p.rsplit('/').next().unwrap_or(&p);
        Ok(Value::from(base.rfind('.').map_or("", |i| &base[i..])))
    }),
    (&["clean", "osClean"], |_, a| {
        Ok(Value::from(path_clean(&string_arg(&a, 0)?)))
    }),
    (&["isAbs", "osIsAbs"], |_, a| {
        Ok(Value::Bool(string_arg(&a, 0)?.starts_with('/')))
    }),
];
