//! Sprig's certificate functions (`genCA`, `genSelfSignedCert`, `genSignedCert`,
//! `genPrivateKey`), on `rcgen` (already linked in for the webhook's `--self-signed`).
//!
//! Their output is random in Helm too, so tests compare its shape. One difference: Sprig makes
//! RSA-2048 keys; `rcgen` generates ECDSA P-256 keys (it cannot generate RSA), which every
//! Kubernetes consumer of such a certificate accepts.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, SanType};

use super::value::Value;

thread_local! {
    /// The CAs `genCA` made in this render, by certificate PEM, for `genSignedCert` to sign with.
    static ISSUERS: RefCell<HashMap<String, CertifiedIssuer<'static, KeyPair>>> =
        RefCell::new(HashMap::new());
}

fn params(
    cn: &str,
    ips: &[String],
    dns: &[String],
    days: i64,
) -> Result<CertificateParams, String> {
    let mut p = CertificateParams::new(Vec::<String>::new()).map_err(|e| e.to_string())?;
    p.distinguished_name.push(DnType::CommonName, cn);
    for ip in ips {
        let addr = ip.parse().map_err(|_| format!("error parsing ip: {ip}"))?;
        p.subject_alt_names.push(SanType::IpAddress(addr));
    }
    for name in dns {
        let name = name
            .clone()
            .try_into()
            .map_err(|e: rcgen::Error| e.to_string())?;
        p.subject_alt_names.push(SanType::DnsName(name));
    }
    let start = jiff::Zoned::now().date();
    let end = start
        .checked_add(jiff::Span::new().days(days.clamp(1, 36_500)))
        .map_err(|e| e.to_string())?;
    p.not_before =
        rcgen::date_time_ymd(start.year().into(), start.month() as u8, start.day() as u8);
    p.not_after = rcgen::date_time_ymd(end.year().into(), end.month() as u8, end.day() as u8);
    Ok(p)
}

fn pair(cert: String, key: String) -> Value {
    let mut m = BTreeMap::new();
    m.insert("Cert".into(), Value::from(cert));
    m.insert("Key".into(), Value::from(key));
    Value::map(m)
}

/// Drops the CAs kept for `genSignedCert` (one render's worth at most).
pub fn forget_issuers() {
    ISSUERS.with(|i| i.borrow_mut().clear());
}

/// The key a `…WithKey` function is given (PEM), or a new one.
fn key_or_new(key_pem: Option<&str>) -> Result<KeyPair, String> {
    match key_pem {
        Some(pem) => KeyPair::from_pem(pem).map_err(|e| format!("error parsing private key: {e}")),
        None => KeyPair::generate().map_err(|e| e.to_string()),
    }
}

pub fn gen_ca(cn: &str, days: i64, key_pem: Option<&str>) -> Result<Value, String> {
    let mut p = params(cn, &[], &[], days)?;
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = key_or_new(key_pem)?;
    let key_pem = key.serialize_pem();
    let issuer = CertifiedIssuer::self_signed(p, key).map_err(|e| e.to_string())?;
    let cert_pem = issuer.pem();
    ISSUERS.with(|i| i.borrow_mut().insert(cert_pem.clone(), issuer));
    Ok(pair(cert_pem, key_pem))
}

pub fn gen_self_signed(
    cn: &str,
    ips: &[String],
    dns: &[String],
    days: i64,
    key_pem: Option<&str>,
) -> Result<Value, String> {
    let p = params(cn, ips, dns, days)?;
    let key = key_or_new(key_pem)?;
    let cert = p.self_signed(&key).map_err(|e| e.to_string())?;
    Ok(pair(cert.pem(), key.serialize_pem()))
}

pub fn gen_signed(
    cn: &str,
    ips: &[String],
    dns: &[String],
    days: i64,
    ca_cert: &str,
    key_pem: Option<&str>,
) -> Result<Value, String> {
    let p = params(cn, ips, dns, days)?;
    let key = key_or_new(key_pem)?;
    ISSUERS.with(|issuers| {
        let issuers = issuers.borrow();
        let issuer = issuers.get(ca_cert).ok_or_else(|| {
            "genSignedCert: the CA must come from genCA in the same render".to_string()
        })?;
        let cert = p.signed_by(&key, issuer).map_err(|e| e.to_string())?;
        Ok(pair(cert.pem(), key.serialize_pem()))
    })
}

pub fn gen_private_key(kind: &str) -> Result<String, String> {
    match kind {
        "rsa" | "ecdsa" | "ed25519" | "dsa" => {}
        other => return Err(format!("Unknown type {other}")),
    }
    let key = KeyPair::generate().map_err(|e| e.to_string())?;
    Ok(key.serialize_pem())
}

/// `buildCustomCert BASE64_CERT BASE64_KEY`: the certificate and key, checked as Sprig checks
/// them (base64, a PEM certificate that parses as X.509, a PEM private key), as a
/// `{Cert, Key}` pair for `genSignedCert` to sign with or a template to print.
pub fn build_custom_cert(b64cert: &str, b64key: &str) -> Result<Value, String> {
    use base64::Engine;
    let decode = |text: &str| base64::engine::general_purpose::STANDARD.decode(text.trim());
    let cert = decode(b64cert).map_err(|_| "unable to decode base64 certificate".to_string())?;
    let key = decode(b64key).map_err(|_| "unable to decode base64 private key".to_string())?;
    let cert_block = pem::parse(&cert).map_err(|_| "unable to decode certificate".to_string())?;
    x509_parser::parse_x509_certificate(cert_block.contents()).map_err(|e| {
        format!("error parsing certificate: decodedCert.Bytes: x509: malformed certificate: {e}")
    })?;
    let key_block = pem::parse(&key)
        .map_err(|_| "error parsing private key: no PEM data in input".to_string())?;
    if !key_block.tag().ends_with("PRIVATE KEY") {
        return Err(format!(
            "error parsing private key: invalid key type {}",
            key_block.tag()
        ));
    }
    Ok(pair(
        String::from_utf8_lossy(&cert).into_owned(),
        String::from_utf8_lossy(&key).into_owned(),
    ))
}
