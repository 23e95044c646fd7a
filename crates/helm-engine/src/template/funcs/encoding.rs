//! Sprig's encodings (`crypto.go`'s base64 and base32).

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    // Go's `base32.StdEncoding`; an error is the result's text, as Sprig returns it.
    (&["b32dec"], |_, a| {
        let text = strval(&arg(&a, 0)?);
        Ok(Value::from(
            match data_encoding::BASE32.decode(text.as_bytes()) {
                Ok(bytes) => gostring::from_bytes(&bytes).into_owned(),
                Err(e) => format!("illegal base32 data at input byte {}", e.position),
            },
        ))
    }),
    (&["b64enc"], |_, a| {
        use base64::Engine;
        Ok(Value::from(
            base64::engine::general_purpose::STANDARD
                .encode(gostring::to_bytes(&strval(&arg(&a, 0)?))),
        ))
    }),
    (&["b64dec"], |_, a| {
        use base64::Engine;
        Ok(Value::from(
            match base64::engine::general_purpose::STANDARD.decode(strval(&arg(&a, 0)?)) {
                Ok(bytes) => gostring::from_bytes(&bytes).into_owned(),
                Err(e) => e.to_string(),
            },
        ))
    }),
    (&["b32enc"], |_, a| {
        Ok(Value::from(
            data_encoding::BASE32.encode(&gostring::to_bytes(&strval(&arg(&a, 0)?))),
        ))
    }),
];
