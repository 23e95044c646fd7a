//! Sprig's semantic versions (`semver.go`, Masterminds/semver).

use super::*;
use crate::template::semver;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["semverCompare"], |_, a| {
        let (constraint, version) = (string_arg(&a, 0)?, string_arg(&a, 1)?);
        semver::matches(&constraint, &version)
            .map(Value::Bool)
            .map_err(|e| Failure::Exec(e.to_string()))
    }),
    (&["semver"], |_, a| {
        semver::parse_object(&string_arg(&a, 0)?).map_err(Failure::Exec)
    }),
];
