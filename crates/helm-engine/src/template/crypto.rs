//! Sprig's password and cipher functions: `bcrypt`, `htpasswd`, `derivePassword`,
//! `encryptAES`, `decryptAES`, on the RustCrypto crates that implement the same algorithms as
//! Go's `golang.org/x/crypto` (bcrypt at Go's default cost, scrypt, AES-256-CBC).

use aes::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};

/// Go's `bcrypt.DefaultCost`.
const BCRYPT_COST: u32 = 10;

/// `bcrypt`: a salted `$2a$` hash, as Go's `bcrypt.GenerateFromPassword` writes it.
pub fn bcrypt(input: &str) -> String {
    // Go's bcrypt reads at most 72 bytes of the password; the Rust crate refuses more.
    let bytes = &input.as_bytes()[..input.len().min(72)];
    match bcrypt::hash_with_result(bytes, BCRYPT_COST) {
        Ok(h) => h.format_for_version(bcrypt::Version::TwoA),
        Err(e) => format!("failed to encrypt string with bcrypt: {e}"),
    }
}

/// `htpasswd`: `user:bcrypt(password)`, or Sprig's error text for a user with a `:`.
pub fn htpasswd(user: &str, password: &str) -> String {
    if user.contains(':') {
        return format!("invalid username: {user}");
    }
    format!("{user}:{}", bcrypt(password))
}

const MASTER_PASSWORD_SEED: &[u8] = b"com.lyndir.masterpassword";

/// Sprig's password templates (the Master Password algorithm's), by type.
fn templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

/// The characters a template letter stands for.
fn characters(class: u8) -> &'static [u8] {
    match class {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
    }
}

/// `derivePassword COUNTER TYPE PASSWORD USER SITE`: the Master Password algorithm (scrypt
/// N=32768, r=8, p=2 over the user, then HMAC-SHA256 over the site), deterministic.
pub fn derive_password(counter: u32, kind: &str, password: &str, user: &str, site: &str) -> String {
    let Some(templates) = templates(kind) else {
        return format!("cannot find password template {kind}");
    };
    let mut salt = MASTER_PASSWORD_SEED.to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user.as_bytes());
    let mut key = [0u8; 64];
    let params = scrypt::Params::new(15, 8, 2, 64).expect("valid scrypt parameters");
    if let Err(e) = scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key) {
        return format!("failed to derive password: {e}");
    }
    let mut message = MASTER_PASSWORD_SEED.to_vec();
    message.extend_from_slice(&(site.len() as u32).to_be_bytes());
    message.extend_from_slice(site.as_bytes());
    message.extend_from_slice(&counter.to_be_bytes());
    let hmac_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key);
    let seed = ring::hmac::sign(&hmac_key, &message);
    let seed = seed.as_ref();
    let template = templates[usize::from(seed[0]) % templates.len()].as_bytes();
    template
        .iter()
        .enumerate()
        .map(|(i, class)| {
            let chars = characters(*class);
            char::from(chars[usize::from(seed[i + 1]) % chars.len()])
        })
        .collect()
}

/// The AES key Sprig makes of a password: its bytes, cut or zero-padded to 32.
fn aes_key(password: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let bytes = password.as_bytes();
    let n = bytes.len().min(32);
    key[..n].copy_from_slice(&bytes[..n]);
    key
}

type Encryptor = cbc::Encryptor<aes::Aes256>;
type Decryptor = cbc::Decryptor<aes::Aes256>;

/// `encryptAES PASSWORD TEXT`: AES-256-CBC with PKCS#7 padding and a random IV before the
/// ciphertext, in base64; empty text stays empty.
pub(super) fn encrypt_aes(password: &str, plaintext: &str) -> Result<String, String> {
    if plaintext.is_empty() {
        return Ok(String::new());
    }
    let mut iv = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut iv)
        .map_err(|_| "cannot read random bytes".to_string())?;
    let sealed = Encryptor::new(&aes_key(password).into(), &iv.into())
        .encrypt_padded_vec_mut::<aes::cipher::block_padding::Pkcs7>(plaintext.as_bytes());
    let mut out = iv.to_vec();
    out.extend_from_slice(&sealed);
    Ok(base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        out,
    ))
}

/// `decryptAES PASSWORD BASE64`: the inverse of [`encrypt_aes`]. Input that is not whole
/// blocks after the IV is Go's `CryptBlocks` panic, as an error here.
pub(super) fn decrypt_aes(password: &str, crypt64: &str) -> Result<String, String> {
    if crypt64.is_empty() {
        return Ok(String::new());
    }
    let crypt = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, crypt64)
        .map_err(|e| format!("illegal base64 data: {e}"))?;
    if crypt.len() < 32 || crypt.len() % 16 != 0 {
        return Err("crypto/cipher: input not full blocks".into());
    }
    let (iv, body) = crypt.split_at(16);
    let iv: [u8; 16] = iv.try_into().map_err(|_| "bad IV".to_string())?;
    let mut plain = Decryptor::new(&aes_key(password).into(), &iv.into())
        .decrypt_padded_vec_mut::<aes::cipher::block_padding::NoPadding>(body)
        .map_err(|_| "crypto/cipher: input not full blocks".to_string())?;
    // Sprig drops as many bytes as the last one says, unchecked (as long as there are that many).
    let pad = usize::from(*plain.last().unwrap_or(&0));
    if pad > plain.len() {
        return Err("runtime error: slice bounds out of range".into());
    }
    plain.truncate(plain.len() - pad);
    Ok(String::from_utf8_lossy(&plain).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aes_round_trips_and_bad_input_is_an_error() {
        let sealed = encrypt_aes("secret", "hello world").unwrap();
        assert_eq!(decrypt_aes("secret", &sealed).unwrap(), "hello world");
        assert!(decrypt_aes("secret", "AAAA").is_err());
        assert_eq!(encrypt_aes("k", "").unwrap(), "");
    }

    #[test]
    fn bcrypt_hashes_verify() {
        let h = bcrypt("pass");
        assert!(h.starts_with("$2a$10$"), "{h}");
        assert!(::bcrypt::verify("pass", &h).unwrap());
        assert!(htpasswd("user", "pass").starts_with("user:$2a$10$"));
    }
}
