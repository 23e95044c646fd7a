//! Sprig's key and certificate functions (`genPrivateKey`, `genCA`, `genSelfSignedCert`,
//! `genSignedCert`, their `…WithKey` forms, `buildCustomCert`), as Sprig's `crypto.go` makes them:
//! the same key kinds and PEM encodings (RSA as PKCS#1 `RSA PRIVATE KEY`, EC P-256 as SEC1
//! `EC PRIVATE KEY`, Ed25519 as PKCS#8 `PRIVATE KEY`, DSA as OpenSSL's `DSA PRIVATE KEY`), and
//! certificates written field by field as Go's `x509.CreateCertificate` writes Sprig's template.
//!
//! The RustCrypto crates make and encode the keys; `x509-cert` gives the X.509 types and reads
//! the CA certificates given to `genSignedCert`. The certificate itself is assembled here, not by
//! a certificate builder (rcgen, `x509-cert`'s own), because each of those decides what Go
//! decides differently — which extensions, in what order, which string type a name takes,
//! which key identifiers — and a chart's certificate should be the one Helm would make.
//! RSA signs through `rsa` (any size Go accepts; ring refuses keys under 2048 bits), EC and
//! Ed25519 through ring.

use std::collections::BTreeMap;

use der::asn1::{AnyRef, BitString, Ia5String, Null, OctetString, UintRef};
use der::{Decode, Encode, Reader, Sequence, Tag};
use x509_cert::Certificate as X509Certificate;
use x509_cert::ext::Extension;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectAltName, SubjectKeyIdentifier,
};
use x509_cert::spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};

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
            KeyKind::Rsa => PrivateKey::Rsa(Box::new(rsa_key(rsa_bits)?)),
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

    /// The key as PKCS#8 (v1, as Go's `MarshalPKCS8PrivateKey` writes it), which is what ring
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

    /// The key's SubjectPublicKeyInfo, as Go's `marshalPublicKey` writes it.
    fn public_key_info(&self) -> Result<Vec<u8>, String> {
        use pkcs8::EncodePublicKey;
        let text = |e: pkcs8::spki::Error| e.to_string();
        match self {
            PrivateKey::Rsa(key) => Ok(key
                .to_public_key()
                .to_public_key_der()
                .map_err(text)?
                .into_vec()),
            PrivateKey::Ec(key) => Ok(key
                .public_key()
                .to_public_key_der()
                .map_err(text)?
                .into_vec()),
            PrivateKey::Ed25519(seed) => {
                use ring::signature::KeyPair;
                let pair = ring::signature::Ed25519KeyPair::from_seed_unchecked(seed)
                    .map_err(|e| e.to_string())?;
                let info = SubjectPublicKeyInfoOwned {
                    algorithm: algorithm(OID_ED25519, false),
                    subject_public_key: BitString::from_bytes(pair.public_key().as_ref())
                        .map_err(|e| e.to_string())?,
                };
                info.to_der().map_err(|e| e.to_string())
            }
            PrivateKey::Dsa(_) => Err(NOT_A_SIGNER.into()),
        }
    }

    /// The signature algorithm Go's `signingParamsForKey` picks for the key's kind.
    fn signature_algorithm(&self) -> Result<AlgorithmIdentifierOwned, String> {
        Ok(match self {
            PrivateKey::Rsa(_) => algorithm(OID_SHA256_WITH_RSA, true),
            PrivateKey::Ec(_) => algorithm(OID_ECDSA_WITH_SHA256, false),
            PrivateKey::Ed25519(_) => algorithm(OID_ED25519, false),
            PrivateKey::Dsa(_) => return Err(NOT_A_SIGNER.into()),
        })
    }

    /// The signature over `message`: PKCS#1 v1.5 with SHA-256, ECDSA P-256 with SHA-256
    /// (ASN.1), or Ed25519.
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        let rng = ring::rand::SystemRandom::new();
        match self {
            PrivateKey::Rsa(key) => {
                use sha2::Digest;
                let digest = sha2::Sha256::digest(message);
                key.sign(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), &digest)
                    .map_err(|e| e.to_string())
            }
            PrivateKey::Ec(_) => {
                use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair};
                let pair = EcdsaKeyPair::from_pkcs8(
                    &ECDSA_P256_SHA256_ASN1_SIGNING,
                    &self.pkcs8_der()?,
                    &rng,
                )
                .map_err(|e| e.to_string())?;
                let signature = pair.sign(&rng, message).map_err(|e| e.to_string())?;
                Ok(signature.as_ref().to_vec())
            }
            PrivateKey::Ed25519(seed) => {
                let pair = ring::signature::Ed25519KeyPair::from_seed_unchecked(seed)
                    .map_err(|e| e.to_string())?;
                Ok(pair.sign(message).as_ref().to_vec())
            }
            PrivateKey::Dsa(_) => Err(NOT_A_SIGNER.into()),
        }
    }
}

const OID_SHA256_WITH_RSA: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const OID_ECDSA_WITH_SHA256: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
const OID_COMMON_NAME: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.5.4.3");
const OID_SERVER_AUTH: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.1");
const OID_CLIENT_AUTH: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.2");

/// An algorithm identifier; RSA's carry an explicit NULL, as Go writes them.
fn algorithm(oid: der::oid::ObjectIdentifier, null_parameters: bool) -> AlgorithmIdentifierOwned {
    AlgorithmIdentifierOwned {
        oid,
        parameters: null_parameters.then(|| Null.into()),
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
/// An RSA key as Go's `rsa.GenerateKey` makes one: two primes of half the size with their top two
/// bits set (so the modulus has exactly `bits` bits), public exponent 65537.
///
/// Why not `rsa::PrivateKey::new`: it searches for each prime on one thread, and a 4096-bit key
/// (what `genPrivateKey "rsa"` makes) then took longer than Helm's Go takes for it. Here each
/// prime's candidates are tested on every core (crypto-primes' `multicore` search, from a ChaCha20
/// generator seeded by the operating system, one stream per candidate), and the rsa crate builds
/// and checks the key from them.
fn rsa_key(bits: usize) -> Result<rsa::PrivateKey, String> {
    use chacha20::ChaCha20Rng;
    use crypto_primes::hazmat::{SetBits, SmallFactorsSieveFactory};
    use crypto_primes::{Flavor, is_prime};
    use rsa::BoxedUint;
    use rsa::rand_core::SeedableRng;

    let half = u32::try_from(bits / 2).map_err(|e| e.to_string())?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let mut rng = ChaCha20Rng::try_from_rng(&mut getrandom::SysRng).map_err(|e| e.to_string())?;
    let mut prime = || -> Result<BoxedUint, String> {
        let sieve = SmallFactorsSieveFactory::<BoxedUint>::new(Flavor::Any, half, SetBits::TwoMsb)
            .map_err(|e| e.to_string())?;
        crypto_primes::multicore::sieve_and_find(
            &mut rng,
            sieve,
            |_, candidate| is_prime(Flavor::Any, candidate),
            threads,
        )
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "no prime found".to_string())
    };
    loop {
        let (p, q) = (prime()?, prime()?);
        if p == q {
            continue;
        }
        // Refused only when 65537 is not invertible modulo the primes' totient: new primes.
        if let Ok(key) = rsa::PrivateKey::from_p_q(p, q, BoxedUint::from(65_537u32)) {
            return Ok(key);
        }
    }
}

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
    Value::Object(std::rc::Rc::new(Certificate { cert, key }))
}

/// Sprig's `certificate` struct, what the certificate functions return and `genSignedCert`
/// takes: a Go struct with the fields `Cert` and `Key`, not a map (a dict with those keys is
/// not a CA to Go's argument check).
pub(super) struct Certificate {
    pub(super) cert: String,
    pub(super) key: String,
}

impl super::value::Object for Certificate {
    fn type_name(&self) -> &str {
        "sprig.certificate"
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Cert" => Some(Value::from(self.cert.as_str())),
            "Key" => Some(Value::from(self.key.as_str())),
            _ => None,
        }
    }
    fn display(&self) -> String {
        format!("{{{} {}}}", self.cert, self.key)
    }
    fn to_data(&self) -> Value {
        let mut m = BTreeMap::new();
        m.insert("Cert".into(), Value::from(self.cert.as_str()));
        m.insert("Key".into(), Value::from(self.key.as_str()));
        Value::map(m)
    }
}

/// What the certificate functions' first arguments say: common name, IP and DNS alternative
/// names, days valid.
pub struct Subject {
    pub cn: String,
    pub ips: Vec<String>,
    pub dns: Vec<String>,
    pub days: i64,
}

/// What `x509.CreateCertificate` takes from the parent certificate (`genSignedCert`'s CA): its
/// subject exactly as written, its key identifier, and its public key.
struct Parent {
    raw_subject: Vec<u8>,
    subject_key_id: Option<Vec<u8>>,
    public_key_info: Vec<u8>,
}

#[derive(Sequence)]
struct Validity<'a> {
    not_before: AnyRef<'a>,
    not_after: AnyRef<'a>,
}

/// RFC 5280's TBSCertificate with the fields Go writes; the names and the key are kept as the
/// bytes Go copies (`RawSubject` of the parent, the marshalled public key).
#[derive(Sequence)]
struct TbsCertificate<'a> {
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
    version: u8,
    serial_number: UintRef<'a>,
    signature: AlgorithmIdentifierOwned,
    issuer: AnyRef<'a>,
    validity: Validity<'a>,
    subject: AnyRef<'a>,
    subject_public_key_info: AnyRef<'a>,
    #[asn1(context_specific = "3", tag_mode = "EXPLICIT")]
    extensions: Vec<Extension>,
}

#[derive(Sequence)]
struct SignedCertificate<'a> {
    tbs_certificate: AnyRef<'a>,
    signature_algorithm: AlgorithmIdentifierOwned,
    signature: BitString,
}

fn der_text(e: der::Error) -> String {
    e.to_string()
}

/// Go's `encoding/asn1` writes a Go string as a PrintableString when every character is in
/// its (strict) PrintableString set — `*` and `&` excluded — and as a UTF8String otherwise.
fn go_string_tag(text: &str) -> Tag {
    let printable = text.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'\''..=b')' | b'+'..=b'/' | b' ' | b':' | b'=' | b'?')
    });
    if printable {
        Tag::PrintableString
    } else {
        Tag::Utf8String
    }
}

/// `pkix.Name{CommonName: cn}.ToRDNSequence()`, marshalled: an empty common name is left out,
/// which leaves the empty SEQUENCE.
fn subject_name(cn: &str) -> Result<Vec<u8>, String> {
    let mut rdns = x509_cert::name::RdnSequence::default();
    if !cn.is_empty() {
        let value = der::asn1::Any::new(go_string_tag(cn), cn.as_bytes()).map_err(der_text)?;
        let attribute = x509_cert::attr::AttributeTypeAndValue {
            oid: OID_COMMON_NAME,
            value,
        };
        rdns.push(vec![attribute].try_into().map_err(der_text)?);
    }
    rdns.to_der().map_err(der_text)
}

/// A time as `encoding/asn1` writes `time.Time`: UTCTime from 1950 to 2049, GeneralizedTime
/// outside, which cannot go beyond year 9999 or before year 0.
fn asn1_time(seconds: i64) -> Result<(Tag, String), String> {
    const NOT_GENERALIZED: &str = "asn1: structure error: cannot represent time as GeneralizedTime";
    let at = jiff::Timestamp::from_second(seconds).map_err(|_| NOT_GENERALIZED.to_string())?;
    let at = at.to_zoned(jiff::tz::TimeZone::UTC);
    let year = at.year();
    if (1950..2050).contains(&year) {
        Ok((Tag::UtcTime, at.strftime("%y%m%d%H%M%SZ").to_string()))
    } else if year < 0 {
        Err(NOT_GENERALIZED.into())
    } else {
        Ok((
            Tag::GeneralizedTime,
            at.strftime("%Y%m%d%H%M%SZ").to_string(),
        ))
    }
}

/// An extension of `value`'s type (x509-cert knows each type's OID).
fn extension<T: Encode + der::oid::AssociatedOid>(
    critical: bool,
    value: &T,
) -> Result<Extension, String> {
    Ok(Extension {
        extn_id: T::OID,
        critical,
        extn_value: OctetString::new(value.to_der().map_err(der_text)?).map_err(der_text)?,
    })
}

/// Go's `marshalSANs`: DNS names, then IP addresses (IPv4, mapped ones too, in 4 bytes).
fn alternative_names(subject: &Subject) -> Result<Vec<GeneralName>, String> {
    let mut names = Vec::new();
    for name in &subject.dns {
        let ia5 = Ia5String::new(name)
            .map_err(|_| format!("x509: {name:?} cannot be encoded as an IA5String"))?;
        names.push(GeneralName::DnsName(ia5));
    }
    for ip in &subject.ips {
        let addr: std::net::IpAddr = ip.parse().map_err(|_| format!("error parsing ip: {ip}"))?;
        let bytes = match addr {
            std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
            std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => v4.octets().to_vec(),
                None => v6.octets().to_vec(),
            },
        };
        names.push(GeneralName::IpAddress(
            OctetString::new(bytes).map_err(der_text)?,
        ));
    }
    Ok(names)
}

/// Sprig's `getBaseCertTemplate` (plus `IsCA` and cert signing for `genCA`) through Go's
/// `x509.CreateCertificate`: its checks, its key identifiers and its extensions, in its order.
fn create_certificate(
    subject: &Subject,
    is_ca: bool,
    key: &PrivateKey,
    parent: Option<&Parent>,
    signer: &PrivateKey,
) -> Result<String, String> {
    let signature_algorithm = signer.signature_algorithm()?;
    let names = alternative_names(subject)?;
    // `rand.Int(rand.Reader, 2^128)`.
    let serial = random_bytes::<16>()?;
    let now = jiff::Timestamp::now().as_second();
    // `time.Hour * 24 * time.Duration(daysValid)`: nanoseconds in an int64, wrapping as Go does.
    let valid = 86_400_000_000_000i64.wrapping_mul(subject.days) / 1_000_000_000;
    let (before_tag, before) = asn1_time(now)?;
    let (after_tag, after) = asn1_time(now.saturating_add(valid))?;
    let public_key_info = key.public_key_info()?;
    let own_subject = subject_name(&subject.cn)?;
    let issuer = parent.map_or(own_subject.as_slice(), |p| p.raw_subject.as_slice());
    let authority_key_id = parent
        .filter(|p| p.raw_subject != own_subject)
        .and_then(|p| p.subject_key_id.clone())
        .filter(|id| !id.is_empty());
    let subject_key_id = if is_ca {
        // Go 1.25 and later: the first 160 bits of SHA-256 of the public key's bits.
        use sha2::Digest;
        let info = SubjectPublicKeyInfoOwned::from_der(&public_key_info).map_err(der_text)?;
        let bits = info.subject_public_key.raw_bytes();
        Some(sha2::Sha256::digest(bits)[..20].to_vec())
    } else {
        None
    };
    if let Some(parent) = parent
        && signer.public_key_info()? != parent.public_key_info
    {
        return Err("x509: provided PrivateKey doesn't match parent's PublicKey".into());
    }

    let mut usages = KeyUsages::DigitalSignature | KeyUsages::KeyEncipherment;
    if is_ca {
        usages |= KeyUsages::KeyCertSign;
    }
    let mut extensions = vec![
        extension(true, &KeyUsage(usages))?,
        extension(
            false,
            &ExtendedKeyUsage(vec![OID_SERVER_AUTH, OID_CLIENT_AUTH]),
        )?,
        extension(
            true,
            &BasicConstraints {
                ca: is_ca,
                path_len_constraint: None,
            },
        )?,
    ];
    if let Some(id) = subject_key_id {
        let id = SubjectKeyIdentifier(OctetString::new(id).map_err(der_text)?);
        extensions.push(extension(false, &id)?);
    }
    if let Some(id) = authority_key_id {
        let id = AuthorityKeyIdentifier {
            key_identifier: Some(OctetString::new(id).map_err(der_text)?),
            authority_cert_issuer: None,
            authority_cert_serial_number: None,
        };
        extensions.push(extension(false, &id)?);
    }
    if !names.is_empty() {
        // RFC 5280 4.2.1.6: critical when the subject is empty.
        let empty_subject = subject.cn.is_empty();
        extensions.push(extension(empty_subject, &SubjectAltName(names))?);
    }

    let any = |bytes| AnyRef::from_der(bytes).map_err(der_text);
    let tbs = TbsCertificate {
        version: 2,
        serial_number: UintRef::new(&serial).map_err(der_text)?,
        signature: signature_algorithm.clone(),
        issuer: any(issuer)?,
        validity: Validity {
            not_before: AnyRef::new(before_tag, before.as_bytes()).map_err(der_text)?,
            not_after: AnyRef::new(after_tag, after.as_bytes()).map_err(der_text)?,
        },
        subject: any(&own_subject)?,
        subject_public_key_info: any(&public_key_info)?,
        extensions,
    }
    .to_der()
    .map_err(der_text)?;
    let signature = signer.sign(&tbs)?;
    let certificate = SignedCertificate {
        tbs_certificate: any(&tbs)?,
        signature_algorithm,
        signature: BitString::from_bytes(&signature).map_err(der_text)?,
    };
    Ok(pem_text(
        "CERTIFICATE",
        certificate.to_der().map_err(der_text)?,
    ))
}

/// The key a `…WithKey` function is given (PEM), or a new RSA-2048 one.
fn key_or_new(key_pem: Option<&str>) -> Result<PrivateKey, String> {
    match key_pem {
        Some(pem) => PrivateKey::parse_pem(pem).map_err(|e| format!("parsing private key: {e}")),
        None => PrivateKey::generate(KeyKind::Rsa, CERTIFICATE_RSA_BITS)
            .map_err(|e| format!("error generating rsa key: {e}")),
    }
}

fn creating(e: String) -> String {
    format!("error creating certificate: {e}")
}

pub(super) fn gen_ca(cn: &str, days: i64, key_pem: Option<&str>) -> Result<Value, String> {
    let subject = Subject {
        cn: cn.to_string(),
        ips: Vec::new(),
        dns: Vec::new(),
        days,
    };
    let key = key_or_new(key_pem)?;
    let cert = create_certificate(&subject, true, &key, None, &key).map_err(creating)?;
    Ok(pair(cert, key.to_pem()?))
}

pub(super) fn gen_self_signed(subject: &Subject, key_pem: Option<&str>) -> Result<Value, String> {
    let key = key_or_new(key_pem)?;
    let cert = create_certificate(subject, false, &key, None, &key).map_err(creating)?;
    Ok(pair(cert, key.to_pem()?))
}

/// Go's `x509.ParseCertificate` as far as Sprig needs it; its message for what it can't read.
fn parse_certificate(der: &[u8]) -> Result<X509Certificate, String> {
    X509Certificate::from_der(der).map_err(|_| "x509: malformed certificate".to_string())
}

/// `genSignedCert`: signed by any CA given as certificate and key PEM (from `genCA`,
/// `buildCustomCert` or values), as Sprig parses it.
pub(super) fn gen_signed(
    subject: &Subject,
    ca: (&str, &str),
    key_pem: Option<&str>,
) -> Result<Value, String> {
    let (ca_cert, ca_key) = ca;
    let block = first_pem_block(ca_cert).ok_or("unable to decode certificate")?;
    let parsed = parse_certificate(block.contents())
        .map_err(|e| format!("error parsing certificate: decodedSignerCert.Bytes: {e}"))?;
    let signer =
        PrivateKey::parse_pem(ca_key).map_err(|e| format!("error parsing private key: {e}"))?;
    let tbs = parsed.tbs_certificate();
    let subject_key_id = tbs
        .get_extension::<SubjectKeyIdentifier>()
        .ok()
        .flatten()
        .map(|(_, id)| id.0.into_bytes().into_vec());
    let parent = Parent {
        raw_subject: tbs.subject().to_der().map_err(der_text)?,
        subject_key_id,
        public_key_info: tbs.subject_public_key_info().to_der().map_err(der_text)?,
    };
    let key = key_or_new(key_pem)?;
    let cert =
        create_certificate(subject, false, &key, Some(&parent), &signer).map_err(creating)?;
    Ok(pair(cert, key.to_pem()?))
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
    parse_certificate(block.contents())
        .map_err(|e| format!("error parsing certificate: decodedCert.Bytes: {e}"))?;
    PrivateKey::parse_pem(&key).map_err(|e| format!("error parsing private key: {e}"))?;
    Ok(pair(cert, key))
}

#[cfg(test)]
mod tests {
    /// Keys from the multi-core search are whole RSA keys of exactly the size asked, and differ.
    #[test]
    fn rsa_keys_have_the_size_asked_and_check() {
        use rsa::traits::{PrivateKeyParts, PublicKeyParts};
        let keys: Vec<rsa::PrivateKey> = (0..2).map(|_| super::rsa_key(1024).unwrap()).collect();
        for key in &keys {
            assert_eq!(key.size() * 8, 1024);
            assert_eq!(key.primes().len(), 2);
            assert!(key.validate().is_ok());
        }
        assert_ne!(keys[0].n(), keys[1].n());
    }
}
