//! Kubernetes' IP and CIDR libraries (`k8s.io/apiserver/pkg/cel/library/ip.go`, `cidr.go`):
//! the values behind `ip('10.0.0.1')` and `cidr('10.0.0.0/8')` (and, in [`Net`], `url()`'s, read
//! in `go_url.rs`).
//!
//! Addresses are read by the standard library's parser, which takes what Go's `netip.ParseAddr`
//! takes for the inputs that matter here (no leading zeros in IPv4 octets, one `::`, an IPv4 tail
//! in IPv6) and writes the same canonical form (RFC 5952). Kubernetes then refuses zones
//! (`fe80::1%en0`) and IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`), so every address here is a
//! plain IPv4 or IPv6 one. The prefix length after `/` is read by hand because Go's
//! `netip.ParsePrefix` refuses a sign or leading zeros there, which Rust's integer parser takes.

use std::fmt;
use std::net::IpAddr;

/// An address, a network or a URL, as `ip()`, `cidr()` and `url()` make them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Net {
    Ip(IpAddr),
    /// The address as written (`cidr('10.0.0.1/8').ip()` is `10.0.0.1`) and its prefix length.
    Cidr(IpAddr, u8),
    Url(Box<super::go_url::Url>),
}

/// Reads an address as Kubernetes' `ip()` does.
pub(super) fn parse_ip(text: &str) -> Result<IpAddr, String> {
    if let Some((addr, _zone)) = text.split_once('%')
        && addr.parse::<std::net::Ipv6Addr>().is_ok()
    {
        return Err(format!(
            "IP address '{text}' with zone value is not allowed"
        ));
    }
    let addr: IpAddr = text
        .parse()
        .map_err(|_| format!("IP Address '{text}' parse error during conversion from string"))?;
    if let IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!("IPv4-mapped IPv6 address '{text}' is not allowed"));
    }
    Ok(addr)
}

/// Reads a network as Kubernetes' `cidr()` does: an address (bits after the prefix allowed),
/// `/`, and a prefix length in decimal without sign or leading zeros.
pub(super) fn parse_cidr(text: &str) -> Result<(IpAddr, u8), String> {
    let fail = || format!("network address '{text}' parse error during conversion from string");
    let (addr, bits) = text.rsplit_once('/').ok_or_else(fail)?;
    if addr.contains('%') {
        return Err(format!("CIDR '{text}' with zone value is not allowed"));
    }
    let addr = parse_ip(addr).map_err(|e| {
        if e.starts_with("IPv4-mapped") {
            e
        } else {
            fail()
        }
    })?;
    let digits_ok = !bits.is_empty()
        && bits.bytes().all(|b| b.is_ascii_digit())
        && (bits == "0" || !bits.starts_with('0'));
    let bits: u8 = if digits_ok { bits.parse().ok() } else { None }.ok_or_else(fail)?;
    if bits > width(addr) {
        return Err(fail());
    }
    Ok((addr, bits))
}

/// The address's length in bits.
fn width(addr: IpAddr) -> u8 {
    match addr {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// The address as a number, and its width.
fn bits_of(addr: IpAddr) -> (u128, u8) {
    match addr {
        IpAddr::V4(a) => (u32::from(a) as u128, 32),
        IpAddr::V6(a) => (u128::from(a), 128),
    }
}

/// The address with every bit after the first `prefix` cleared.
pub(super) fn masked(addr: IpAddr, prefix: u8) -> IpAddr {
    let (n, width) = bits_of(addr);
    let host_bits = u32::from(width - prefix.min(width));
    let n = n
        .checked_shr(host_bits)
        .unwrap_or(0)
        .checked_shl(host_bits)
        .unwrap_or(0);
    match addr {
        IpAddr::V4(_) => IpAddr::V4((n as u32).into()),
        IpAddr::V6(_) => IpAddr::V6(n.into()),
    }
}

/// Whether the network holds the address (of the same family).
pub(super) fn contains_ip(network: (IpAddr, u8), addr: IpAddr) -> bool {
    network.0.is_ipv4() == addr.is_ipv4() && masked(network.0, network.1) == masked(addr, network.1)
}

/// Whether the network holds every address of the other: the same family, a prefix no longer
/// than the other's, and the other's address inside it.
///
/// Kubernetes' `cidrContainsCIDR` compares the masked network with the other's address *not*
/// masked to the same length (`netip.PrefixFrom` does not mask), which would make
/// `cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')` false; its documentation
/// (`cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))` is true) and cel-spec's
/// `network_ext` tests say containment, which is what is done here.
pub(super) fn contains_cidr(network: (IpAddr, u8), other: (IpAddr, u8)) -> bool {
    network.1 <= other.1 && contains_ip(network, other.0)
}

/// Go's `netip.Addr` predicates, as Kubernetes' `ip` library exposes them.
pub(super) fn is_loopback(addr: IpAddr) -> bool {
    addr.is_loopback()
}

pub(super) fn is_unspecified(addr: IpAddr) -> bool {
    addr.is_unspecified()
}

/// IPv4 224.0.0.0/24; IPv6 `ffX2::/16` (link-local scope, any flags), as Go tests it.
pub(super) fn is_link_local_multicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => a.octets()[..3] == [224, 0, 0],
        IpAddr::V6(a) => a.segments()[0] & 0xff0f == 0xff02,
    }
}

/// IPv4 169.254.0.0/16; IPv6 fe80::/10.
pub(super) fn is_link_local_unicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => a.octets()[..2] == [169, 254],
        IpAddr::V6(a) => a.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// Go's definition: not unspecified, loopback, multicast, link-local unicast or the IPv4
/// broadcast address. Private and unique-local addresses count as global unicast.
pub(super) fn is_global_unicast(addr: IpAddr) -> bool {
    let broadcast = matches!(addr, IpAddr::V4(a) if a.is_broadcast());
    !addr.is_unspecified()
        && !addr.is_loopback()
        && !addr.is_multicast()
        && !is_link_local_unicast(addr)
        && !broadcast
}

impl fmt::Display for Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Net::Ip(a) => write!(f, "{a}"),
            Net::Cidr(a, bits) => write!(f, "{a}/{bits}"),
            Net::Url(u) => f.write_str(u.text()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_kubernetes_reads_them() {
        for ok in [
            "127.0.0.1",
            "::1",
            "2001:DB8::68",
            "0.0.0.0",
            "::",
            "::1.2.3.4",
        ] {
            assert!(parse_ip(ok).is_ok(), "{ok}");
        }
        for bad in [
            "127.0.0.256",
            ":::1",
            "01.2.3.4",
            "192.168.0.1.0",
            "fe80::1%en0",
            "::ffff:192.168.0.1",
            "::ffff:c0a8:1",
            " 1.2.3.4",
            "",
        ] {
            assert!(parse_ip(bad).is_err(), "{bad}");
        }
        assert!(parse_ip("fe80::1%en0").unwrap_err().contains("zone"));
        assert!(
            parse_ip("::ffff:1.2.3.4")
                .unwrap_err()
                .contains("IPv4-mapped")
        );
    }

    #[test]
    fn prefix_lengths_read_as_go_reads_them() {
        assert_eq!(parse_cidr("10.0.0.1/8").map(|c| c.1), Ok(8));
        assert_eq!(parse_cidr("::/0").map(|c| c.1), Ok(0));
        for bad in [
            "192.168.0.0/",
            "192.168.0.0/33",
            "::1/129",
            "10.0.0.0/08",
            "10.0.0.0/+8",
            "10.0.0.0",
            "fe80::1%en0/24",
            "::ffff:192.168.0.1/24",
        ] {
            assert!(parse_cidr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn masking_and_containment() {
        let net = |s| parse_cidr(s).unwrap();
        let ip = |s| parse_ip(s).unwrap();
        assert_eq!(masked(ip("192.168.0.1"), 24), ip("192.168.0.0"));
        assert_eq!(masked(ip("2001:db8::1"), 0), ip("::"));
        assert_eq!(masked(ip("10.1.2.3"), 32), ip("10.1.2.3"));
        assert!(contains_ip(net("192.168.0.0/24"), ip("192.168.0.1")));
        assert!(!contains_ip(net("192.168.0.0/24"), ip("192.168.1.1")));
        assert!(!contains_ip(net("0.0.0.0/0"), ip("::1")));
        assert!(contains_cidr(net("10.0.0.0/8"), net("10.1.0.0/16")));
        assert!(contains_cidr(net("192.168.0.0/24"), net("192.168.0.1/32")));
        assert!(!contains_cidr(net("192.168.0.0/24"), net("192.168.0.0/23")));
        assert!(!contains_cidr(net("192.168.1.0/24"), net("192.168.2.0/24")));
    }

    #[test]
    fn predicates_follow_go() {
        let ip = |s| parse_ip(s).unwrap();
        assert!(is_link_local_multicast(ip("224.0.0.1")));
        assert!(!is_link_local_multicast(ip("224.0.1.1")));
        assert!(is_link_local_multicast(ip("ff02::1")));
        assert!(is_link_local_multicast(ip("ff12::1")));
        assert!(!is_link_local_multicast(ip("fd00::1")));
        assert!(is_link_local_unicast(ip("169.254.169.254")));
        assert!(is_link_local_unicast(ip("fe80::1")));
        assert!(!is_link_local_unicast(ip("fd80::1")));
        assert!(is_global_unicast(ip("192.168.0.1")));
        assert!(is_global_unicast(ip("fd00::1")));
        assert!(!is_global_unicast(ip("255.255.255.255")));
        assert!(!is_global_unicast(ip("ff00::1")));
        assert!(!is_global_unicast(ip("0.0.0.0")));
        assert!(!is_global_unicast(ip("127.0.0.1")));
    }
}
