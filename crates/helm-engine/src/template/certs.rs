//! Sprig's key and certificate functions (`genPrivateKey`, `genCA`, `genSelfSignedCert`,
//! `genSignedCert`, their `…WithKey` forms, `buildCustomCert`), as Sprig's `crypto.go` makes them:
//! the same key kinds and PEM encodings (RSA as PKCS#1 `RSA PRIVATE KEY`, EC P-256 as SEC1
//! `EC PRIVATE KEY`, Ed25519 as PKCS#8 `PRIVATE KEY`, DSA as OpenSSL's `DSA PRIVATE KEY`) and the
//! same certificate template (128-bit random serial, valid from now for `days × 24h`, digital
//! signature + key encipherment (+ cert sign for a CA), server + client auth, basic constraints).
//!
//! The RustCrypto crates make and encode the keys (ring, under `rcgen`, cannot generate RSA or
//! DSA keys nor write PKCS#1/SEC1); `rcgen` writes and signs the certificates.

use std::collections::BTreeMap;

use der::asn1::UintRef;
use der::{Decode, Encode, Reader};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType, SerialNumber, SignatureAlgorithm,
};

use super::value::Value;

/// Sprig's key sizes: `genPrivateKey "rsa"` makes 4096-bit keys, the certificate functions 2048.
const PRIVATE_KEY_RSA_BITS: usize = 4096;
const CERTIFICATE_RSA_BITS: usize = 2048;

/// A private key of one of the kinds Sprig's `parsePrivateKeyPEM` reads and `pemBlockForKey`
/// writes.
enum PrivateKey {
    Rsa(Box<rsa::PrivateKey>),
    Ec(p256::SecretKey),
    /// The 32-byte seed, which is all PKCS#8 holds of an Ed25519 key.
    Ed25519([u8; 32]),
    /// DSA keys can be made and printed, never sign a certificate (Go: not a crypto.Signer).
    Dsa(DsaKey),
}

/// OpenSSL's `DSA PRIVATE KEY` body, Sprig's `DSAKeyFormat`: SEQUENCE { version, p, q, g, y, x }.
struct DsaKey {
    fields: [Vec<u8>; 5],
}

const OID_RSA: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const OID_EC: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const OID_ED25519: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.3.101.112");

fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Go's `pem.EncodeToMemory`: 64-column base64, LF line ends.
fn pem_text(tag: &str, der: Vec<u8>) -> String {
    let config = pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF);
    pem::encode_config(&pem::Pem::new(tag, der), config)
}

/// The key kinds `genPrivateKey` makes, by the names it takes.
#[derive(Clone, Copy)]
enum KeyKind {
    Rsa,
    Ecdsa,
    Ed25519,
    Dsa,
}

impl KeyKind {
    fn of(name: &str) -> Option<KeyKind> {
        Some(match name {
            "" | "rsa" => KeyKind::Rsa,
            "ecdsa" => KeyKind::Ecdsa,
            "ed25519" => KeyKind::Ed25519,
            "dsa" => KeyKind::Dsa,
            _ => return None,
        })
    }
}

/// What Go's `x509.CreateCertificate` says of a key that cannot sign (DSA).
const NOT_A_SIGNER: &str = "x509: certificate private key does not implement crypto.Signer";

impl PrivateKey {
    fn generate(kind: KeyKind, rsa_bits: usize) -> Result<PrivateKey, String> {
        let mut rng = getrandom::SysRng;
        Ok(match kind {
            KeyKind::Rsa => PrivateKey::Rsa(Box::new(
                rsa::PrivateKey::new(&mut rng, rsa_bits).map_err(|e| e.to_string())?,
            )),
            KeyKind::Ecdsa => PrivateKey::Ec(random_ec_key()?),
            KeyKind::Ed25519 => PrivateKey::Ed25519(random_bytes()?),
            KeyKind::Dsa => {
                use dsa::{Components, KeySize, SigningKey};
                let components = Components::try_generate_from_rng_with_key_size(
                    &mut rng,
                    KeySize::DSA_2048_256,
                )
                .map_err(|e| e.to_string())?;
                let key = SigningKey::try_generate_from_rng_with_components(&mut rng, components)
                    .map_err(|e| e.to_string())?;
                let public = key.verifying_key();
                let parts = public.components();
                PrivateKey::Dsa(DsaKey {
                    fields: [
                        parts.p().to_be_bytes().into_vec(),
                        parts.q().to_be_bytes().into_vec(),
                        parts.g().to_be_bytes().into_vec(),
                        public.y().to_be_bytes().into_vec(),
                        key.x().to_be_bytes().into_vec(),
                    ],
                })
            }
        })
    }

    /// Sprig's `parsePrivateKeyPEM`, with its messages.
    fn parse_pem(text: &str) -> Result<PrivateKey, String> {
        let block = first_pem_block(text).ok_or("no PEM data in input")?;
        let der = block.contents();
        let tag = block.tag();
        if tag == "PRIVATE KEY" {
            return Self::from_pkcs8(der).map_err(|e| format!("decoding PEM as PKCS#8: {e}"));
        }
        let Some(kind) = tag.strip_suffix(" PRIVATE KEY") else {
            return Err(format!("no private key data in PEM block of type {tag}"));
        };
        match kind {
            "RSA" => {
                use rsa::pkcs1::DecodeRsaPrivateKey;
                rsa::PrivateKey::from_pkcs1_der(der)
                    .map(|k| PrivateKey::Rsa(Box::new(k)))
                    .map_err(|e| format!("parsing RSA private key from PEM: {e}"))
            }
            "EC" => p256::SecretKey::from_sec1_der(der)
                .map(PrivateKey::Ec)
                .map_err(|e| format!("parsing EC private key from PEM: {e}")),
            "DSA" => DsaKey::from_der(der)
                .map(PrivateKey::Dsa)
                .map_err(|e| format!("parsing DSA private key from PEM: {e}")),
            _ => Err(format!("invalid private key type {tag}")),
        }
    }

    fn from_pkcs8(der: &[u8]) -> Result<PrivateKey, String> {
        let info = pkcs8::PrivateKeyInfoRef::from_der(der).map_err(|e| e.to_string())?;
        let oid = info.algorithm.oid;
        if oid == OID_RSA {
            use pkcs8::DecodePrivateKey;
            rsa::PrivateKey::from_pkcs8_der(der)
                .map(|k| PrivateKey::Rsa(Box::new(k)))
                .map_err(|e| e.to_string())
        } else if oid == OID_EC {
            use pkcs8::DecodePrivateKey;
            p256::SecretKey::from_pkcs8_der(der)
                .map(PrivateKey::Ec)
                .map_err(|_| "x509: unsupported elliptic curve".to_string())
        } else if oid == OID_ED25519 {
            let seed = <&der::asn1::OctetStringRef>::from_der(info.private_key.as_bytes())
                .map_err(|e| e.to_string())?;
            seed.as_bytes()
                .try_into()
                .map(PrivateKey::Ed25519)
                .map_err(|_| "x509: invalid Ed25519 private key length".to_string())
        } else {
            Err(format!(
                "x509: PKCS#8 wrapping contained private key with unknown algorithm: {oid}"
            ))
        }
    }

    /// Sprig's `pemBlockForKey`.
    fn to_pem(&self) -> Result<String, String> {
        let text = |e: der::Error| e.to_string();
        Ok(match self {
            PrivateKey::Rsa(key) => {
                use rsa::pkcs1::EncodeRsaPrivateKey;
                let der = key.to_pkcs1_der().map_err(|e| e.to_string())?;
                pem_text("RSA PRIVATE KEY", der.as_bytes().to_vec())
            }
            PrivateKey::Ec(key) => {
                pem_text("EC PRIVATE KEY", key.to_sec1_der().map_err(text)?.to_vec())
            }
            PrivateKey::Ed25519(_) => pem_text("PRIVATE KEY", self.pkcs8_der()?),
            PrivateKey::Dsa(key) => pem_text("DSA PRIVATE KEY", key.to_der().map_err(text)?),
        })
    }

    /// The key as PKCS#8 (v1, as Go's `MarshalPKCS8PrivateKey` writes it), which is what rcgen
    /// signs with.
    fn pkcs8_der(&self) -> Result<Vec<u8>, String> {
        use pkcs8::EncodePrivateKey;
        let text = |e: pkcs8::Error| e.to_string();
        match self {
            PrivateKey::Rsa(key) => key
                .to_pkcs8_der()
                .map(|d| d.as_bytes().to_vec())
                .map_err(text),
            PrivateKey::Ec(key) => key
                .to_pkcs8_der()
                .map(|d| d.as_bytes().to_vec())
                .map_err(text),
            PrivateKey::Ed25519(seed) => ed25519_pkcs8(seed).map_err(|e| e.to_string()),
            PrivateKey::Dsa(_) => Err(NOT_A_SIGNER.into()),
        }
    }

    /// The key as rcgen signs with it, with the signature algorithm Go picks for its kind; the
    /// error is `x509.CreateCertificate`'s as Sprig wraps it.
    fn signer(&self) -> Result<KeyPair, String> {
        self.rcgen_key_pair()
            .map_err(|e| format!("error creating certificate: {e}"))
    }

    fn rcgen_key_pair(&self) -> Result<KeyPair, String> {
        let algorithm: &'static SignatureAlgorithm = match self {
            PrivateKey::Rsa(_) => &rcgen::PKCS_RSA_SHA256,
            PrivateKey::Ec(_) => &rcgen::PKCS_ECDSA_P256_SHA256,
            PrivateKey::Ed25519(_) => &rcgen::PKCS_ED25519,
            PrivateKey::Dsa(_) => return Err(NOT_A_SIGNER.into()),
        };
        let der = self.pkcs8_der()?;
        KeyPair::from_pkcs8_der_and_sign_algo(&der.as_slice().into(), algorithm)
            .map_err(|e| e.to_string())
    }
}

/// PKCS#8 v1 of an Ed25519 seed: the algorithm, and the seed as an OCTET STRING in an OCTET
/// STRING (RFC 8410 §7).
fn ed25519_pkcs8(seed: &[u8; 32]) -> der::Result<Vec<u8>> {
    let inner = der::asn1::OctetStringRef::new(seed)?.to_der()?;
    let algorithm = pkcs8::AlgorithmIdentifierRef {
        oid: OID_ED25519,
        parameters: None,
    };
    pkcs8::PrivateKeyInfoRef::new(algorithm, der::asn1::OctetStringRef::new(&inner)?).to_der()
}

/// A P-256 key from a uniformly random scalar in [1, n), drawn by rejection (as
/// `ecdsa.GenerateKey` does), so a failing system RNG is an error rather than a panic.
fn random_ec_key() -> Result<p256::SecretKey, String> {
    loop {
        let bytes: [u8; 32] = random_bytes()?;
        if let Ok(key) = p256::SecretKey::from_bytes(&p256::FieldBytes::from(bytes)) {
            return Ok(key);
        }
    }
}

impl DsaKey {
    fn from_der(der: &[u8]) -> Result<DsaKey, der::Error> {
        let mut reader = der::SliceReader::new(der)?;
        let fields = reader.sequence(|r| -> der::Result<[Vec<u8>; 5]> {
            let _version = u8::decode(r)?;
            let mut next = || UintRef::decode(r).map(|u| u.as_bytes().to_vec());
            Ok([next()?, next()?, next()?, next()?, next()?])
        })?;
        Ok(DsaKey { fields })
    }

    fn to_der(&self) -> Result<Vec<u8>, der::Error> {
        let mut body = 0u8.to_der()?;
        for field in &self.fields {
            body.extend(UintRef::new(field)?.to_der()?);
        }
        let header = der::Header::new(der::Tag::Sequence, der::Length::try_from(body.len())?);
        let mut out = header.to_der()?;
        out.extend(body);
        Ok(out)
    }
}

/// Go's `pem.Decode`: the first PEM block in the text, whatever comes before it.
fn first_pem_block(text: &str) -> Option<pem::Pem> {
    let start = text.find("-----BEGIN ")?;
    pem::parse(&text[start..]).ok()
}

fn pair(cert: String, key: String) -> Value {
    let mut m = BTreeMap::new();
    m.insert("Cert".into(), Value::from(cert));
    m.insert("Key".into(), Value::from(key));
    Value::map(m)
}

/// What the certificate functions' first arguments say: common name, IP and DNS alternative
/// names, days valid.
pub struct Subject {
    pub cn: String,
    pub ips: Vec<String>,
    pub dns: Vec<String>,
    pub days: i64,
}

/// Sprig's `getBaseCertTemplate`.
fn base_template(subject: &Subject) -> Result<CertificateParams, String> {
    let Subject { cn, ips, dns, days } = subject;
    let (cn, days) = (cn.as_str(), *days);
    let mut p = CertificateParams::default();
    p.distinguished_name = rcgen::DistinguishedName::new();
    p.distinguished_name.push(DnType::CommonName, cn);
    // Go writes DNS names before IP addresses in the SAN extension.
    for name in dns {
        let name = name
            .clone()
            .try_into()
            .map_err(|e: rcgen::Error| e.to_string())?;
        p.subject_alt_names.push(SanType::DnsName(name));
    }
    for ip in ips {
        let addr = ip.parse().map_err(|_| format!("error parsing ip: {ip}"))?;
        p.subject_alt_names.push(SanType::IpAddress(addr));
    }
    // `rand.Int(rand.Reader, 2^128)`.
    p.serial_number = Some(SerialNumber::from_slice(&random_bytes::<16>()?));
    let now = jiff::Timestamp::now().as_second();
    let at = |seconds: i64| {
        time::OffsetDateTime::from_unix_timestamp(seconds).map_err(|e| e.to_string())
    };
    p.not_before = at(now)?;
    // `time.Hour * 24 * time.Duration(daysValid)`: nanoseconds in an int64, wrapping as Go does.
    let valid = 86_400_000_000_000i64.wrapping_mul(days) / 1_000_000_000;
    p.not_after = at(now.saturating_add(valid))?;
    p.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    p.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    p.is_ca = IsCa::ExplicitNoCa;
    Ok(p)
}

/// The key a `…WithKey` function is given (PEM), or a new RSA-2048 one.
fn key_or_new(key_pem: Option<&str>) -> Result<PrivateKey, String> {
    match key_pem {
        Some(pem) => PrivateKey::parse_pem(pem).map_err(|e| format!("parsing private key: {e}")),
        None => PrivateKey::generate(KeyKind::Rsa, CERTIFICATE_RSA_BITS)
            .map_err(|e| format!("error generating rsa key: {e}")),
    }
}

fn creating(e: rcgen::Error) -> String {
    format!("error creating certificate: {e}")
}

pub(super) fn gen_ca(cn: &str, days: i64, key_pem: Option<&str>) -> Result<Value, String> {
    let subject = Subject {
        cn: cn.to_string(),
        ips: Vec::new(),
        dns: Vec::new(),
        days,
    };
    let mut p = base_template(&subject)?;
    p.key_usages.push(KeyUsagePurpose::KeyCertSign);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = key_or_new(key_pem)?;
    let cert = p.self_signed(&key.signer()?).map_err(creating)?;
    Ok(pair(cert.pem(), key.to_pem()?))
}

pub(super) fn gen_self_signed(subject: &Subject, key_pem: Option<&str>) -> Result<Value, String> {
    let p = base_template(subject)?;
    let key = key_or_new(key_pem)?;
    let cert = p.self_signed(&key.signer()?).map_err(creating)?;
    Ok(pair(cert.pem(), key.to_pem()?))
}

/// `genSignedCert`: signed by any CA given as certificate and key PEM (from `genCA`,
/// `buildCustomCert` or values), as Sprig parses it.
pub fn gen_signed(
    subject: &Subject,
    ca: (&str, &str),
    key_pem: Option<&str>,
) -> Result<Value, String> {
    let (ca_cert, ca_key) = ca;
    let block = first_pem_block(ca_cert).ok_or("unable to decode certificate")?;
    let (_, parsed) = x509_parser::parse_x509_certificate(block.contents()).map_err(|e| {
        format!(
            "error parsing certificate: decodedSignerCert.Bytes: x509: malformed certificate: {e}"
        )
    })?;
    let ca_signer = PrivateKey::parse_pem(ca_key)
        .map_err(|e| format!("error parsing private key: {e}"))?
        .signer()?;
    let mut p = base_template(subject)?;
    // Go names the issuer's key only when issuer and subject differ and the CA has a key id.
    let has_key_id = parsed.extensions().iter().any(|e| {
        matches!(
            e.parsed_extension(),
            x509_parser::extensions::ParsedExtension::SubjectKeyIdentifier(_)
        )
    });
    // Go compares the whole names; the new certificate's subject is its common name alone.
    let mut issuer_names = parsed.subject().iter_attributes();
    let same_name = issuer_names.next().is_some_and(|a| {
        a.attr_type() == &x509_parser::oid_registry::OID_X509_COMMON_NAME
            && a.as_str().ok() == Some(subject.cn.as_str())
    }) && issuer_names.next().is_none();
    p.use_authority_key_identifier_extension = has_key_id && !same_name;
    // rcgen takes the CA's name and key id from the certificate as x509-parser reads it.
    let issuer = Issuer::from_ca_cert_der(&block.contents().into(), ca_signer)
        .map_err(|e| format!("error parsing certificate: {e}"))?;
    let key = key_or_new(key_pem)?;
    let cert = p.signed_by(&key.signer()?, &issuer).map_err(creating)?;
    Ok(pair(cert.pem(), key.to_pem()?))
}

/// `genPrivateKey`: Sprig returns its errors as the function's text, not as template errors.
pub fn gen_private_key(kind: &str) -> String {
    let Some(kind) = KeyKind::of(kind) else {
        return format!("Unknown type {kind}");
    };
    PrivateKey::generate(kind, PRIVATE_KEY_RSA_BITS)
        .and_then(|key| key.to_pem())
        .unwrap_or_else(|e| format!("failed to generate private key: {e}"))
}

/// `buildCustomCert BASE64_CERT BASE64_KEY`: the certificate and key, checked as Sprig checks
/// them (base64, a PEM certificate that parses as X.509, a private key Sprig can read), as a
/// `{Cert, Key}` pair for `genSignedCert` to sign with or a template to print.
pub(super) fn build_custom_cert(b64cert: &str, b64key: &str) -> Result<Value, String> {
    use base64::Engine;
    // Go's base64 decoder skips line breaks, nothing else.
    let decode = |text: &str| {
        let text: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
        base64::engine::general_purpose::STANDARD.decode(text)
    };
    let cert = decode(b64cert).map_err(|_| "unable to decode base64 certificate".to_string())?;
    let key = decode(b64key).map_err(|_| "unable to decode base64 private key".to_string())?;
    let cert = String::from_utf8_lossy(&cert).into_owned();
    let key = String::from_utf8_lossy(&key).into_owned();
    let block = first_pem_block(&cert).ok_or("unable to decode certificate")?;
    x509_parser::parse_x509_certificate(block.contents()).map_err(|e| {
        format!("error parsing certificate: decodedCert.Bytes: x509: malformed certificate: {e}")
    })?;
    PrivateKey::parse_pem(&key).map_err(|e| format!("error parsing private key: {e}"))?;
    Ok(pair(cert, key))
}
