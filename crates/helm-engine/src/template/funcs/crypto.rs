//! Sprig's hashes, passwords, ciphers, keys and certificates (`crypto.go`).

use super::*;
use crate::template::{certs, crypto, digest};

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["sha256sum"], |_, a| {
        Ok(Value::from(digest::sha256_hex(&gostring::to_bytes(
            &strval(&arg(&a, 0)?),
        ))))
    }),
    (&["sha1sum"], |_, a| {
        Ok(Value::from(digest::sha1_hex(&gostring::to_bytes(&strval(
            &arg(&a, 0)?,
        )))))
    }),
    (&["adler32sum"], |_, a| {
        Ok(Value::from(
            digest::adler32(&gostring::to_bytes(&strval(&arg(&a, 0)?))).to_string(),
        ))
    }),
    (&["sha512sum"], |_, a| {
        Ok(Value::from(digest::sha512_hex(&gostring::to_bytes(
            &strval(&arg(&a, 0)?),
        ))))
    }),
    (&["htpasswd"], |_, a| {
        Ok(Value::from(crypto::htpasswd(
            &string_arg(&a, 0)?,
            &string_arg(&a, 1)?,
        )))
    }),
    (&["bcrypt"], |_, a| {
        Ok(Value::from(crypto::bcrypt(&string_arg(&a, 0)?)))
    }),
    (&["derivePassword"], |_, a| {
        let counter = u32::try_from(to_int(&arg(&a, 0)?)).unwrap_or(0);
        Ok(Value::from(crypto::derive_password(
            counter,
            &string_arg(&a, 1)?,
            &string_arg(&a, 2)?,
            &string_arg(&a, 3)?,
            &string_arg(&a, 4)?,
        )))
    }),
    (&["encryptAES"], |_, a| {
        crypto::encrypt_aes(&string_arg(&a, 0)?, &string_arg(&a, 1)?)
            .map(Value::from)
            .map_err(Failure::Exec)
    }),
    (&["decryptAES"], |_, a| {
        crypto::decrypt_aes(&string_arg(&a, 0)?, &string_arg(&a, 1)?)
            .map(Value::from)
            .map_err(Failure::Exec)
    }),
    (&["buildCustomCert"], |_, a| {
        certs::build_custom_cert(&string_arg(&a, 0)?, &string_arg(&a, 1)?).map_err(Failure::Exec)
    }),
    (&["genCA", "genCAWithKey"], |_, a| {
        let key = a.get(2).map(strval);
        certs::gen_ca(&string_arg(&a, 0)?, to_int(&arg(&a, 1)?), key.as_deref())
            .map_err(Failure::Exec)
    }),
    (
        &["genSelfSignedCert", "genSelfSignedCertWithKey"],
        |_, a| {
            let key = a.get(4).map(strval);
            certs::gen_self_signed(&cert_subject(&a)?, key.as_deref()).map_err(Failure::Exec)
        },
    ),
    (&["genSignedCert", "genSignedCertWithKey"], |_, a| {
        let ca = arg(&a, 4)?;
        let ca = match &ca {
            Value::Object(o) => {
                (o.as_ref() as &dyn std::any::Any).downcast_ref::<certs::Certificate>()
            }
            _ => None,
        };
        let Some(ca) = ca else {
            return match arg(&a, 4)? {
                Value::Nil => argument_error(4, "invalid value; expected sprig.certificate"),
                other => argument_error(
                    4,
                    format!(
                        "wrong type for value; expected sprig.certificate; got {}",
                        other.type_name()
                    ),
                ),
            };
        };
        let (ca_cert, ca_key) = (ca.cert.as_str(), ca.key.as_str());
        let key = a.get(5).map(strval);
        certs::gen_signed(&cert_subject(&a)?, (ca_cert, ca_key), key.as_deref())
            .map_err(Failure::Exec)
    }),
    (&["genPrivateKey"], |_, a| {
        Ok(Value::from(certs::gen_private_key(&string_arg(&a, 0)?)))
    }),
];
