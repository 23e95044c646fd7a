//! Sprig's random and clock functions. Their output differs from run to run (in Helm too), so
//! tests compare their shape, not their text.

use ring::rand::{SecureRandom, SystemRandom};

pub const ALPHANUM: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
pub const ALPHA: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub const NUMERIC: &str = "0123456789";
pub const ASCII: &str = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";

pub fn bytes(n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    // The system's generator only fails if the OS has none; zeros are then still a valid shape.
    let _ = SystemRandom::new().fill(&mut buf);
    buf
}

/// `n` characters drawn from `alphabet`.
pub fn string(n: i64, alphabet: &str) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let n = n.clamp(0, 1 << 20) as usize;
    bytes(n)
        .into_iter()
        .map(|b| chars[b as usize % chars.len()])
        .collect()
}

pub fn int_between(min: i64, max: i64) -> i64 {
    if max <= min {
        return min;
    }
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&bytes(8));
    min + (u64::from_le_bytes(raw) % (max - min) as u64) as i64
}

pub fn uuid_v4() -> String {
    let mut b = bytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}
