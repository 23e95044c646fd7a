//! Kubernetes' IP and CIDR libraries (`net.rs`), in Kubernetes' base environment since 1.30.

use super::*;

pub(super) fn register(r: &mut Registry) {
    fn ip(v: &Val<'_>) -> Result<IpAddr, EvalError> {
        match v.kind() {
            Kind::Net(Net::Ip(a)) => Ok(*a),
            Kind::Str(t) => net::parse_ip(t).map_err(err),
            _ => Err(err(format!("{} is not an IP address", v.type_name()))),
        }
    }
    fn cidr(v: &Val<'_>) -> Result<(IpAddr, u8), EvalError> {
        match v.kind() {
            Kind::Net(Net::Cidr(a, bits)) => Ok((*a, *bits)),
            Kind::Str(t) => net::parse_cidr(t).map_err(err),
            _ => Err(err(format!("{} is not a CIDR", v.type_name()))),
        }
    }
    r.add(
        "ip(string) -> net.IP",
        "an IPv4 or IPv6 address (`10.0.0.1`, `::1`); an error for anything else, a zone (`fe80::1%eth0`) or an IPv4-mapped IPv6 address included",
        |_, a| Ok(Val::Net(Rc::new(Net::Ip(ip(&a[0])?)))),
    );
    r.add(
        "isIP(string) -> bool",
        "whether `ip()` takes the text",
        |_, a| Ok(Val::Bool(net::parse_ip(s(&a[0])).is_ok())),
    );
    r.add(
        "ip.isCanonical(string) -> bool",
        "whether the address is written in its one canonical form (`2001:db8::1`, not `2001:DB8:0::1`); an error when it is not an address",
        |_, a| {
            let text = s(&a[0]);
            Ok(Val::Bool(ip(&a[0])?.to_string() == text))
        },
    );
    r.add("net.IP.family() -> int", "4 or 6", |_, a| {
        Ok(Val::Int(if ip(&a[0])?.is_ipv4() { 4 } else { 6 }))
    });
    // Go's `netip.Addr` methods of the same names.
    for (sig, doc) in [
        ("net.IP.isUnspecified() -> bool", "`0.0.0.0` or `::`"),
        ("net.IP.isLoopback() -> bool", "127.0.0.0/8 or `::1`"),
        (
            "net.IP.isLinkLocalMulticast() -> bool",
            "224.0.0.0/24, or IPv6 multicast of link-local scope (`ff02::/16`, any flags)",
        ),
        (
            "net.IP.isLinkLocalUnicast() -> bool",
            "169.254.0.0/16 or `fe80::/10`",
        ),
        (
            "net.IP.isGlobalUnicast() -> bool",
            "none of unspecified, loopback, multicast, link-local unicast or 255.255.255.255 (private addresses are global unicast, as in Go)",
        ),
    ] {
        r.add(sig, doc, |c, a| {
            let addr = ip(&a[0])?;
            Ok(Val::Bool(match c.name {
                "isUnspecified" => net::is_unspecified(addr),
                "isLoopback" => net::is_loopback(addr),
                "isLinkLocalMulticast" => net::is_link_local_multicast(addr),
                "isLinkLocalUnicast" => net::is_link_local_unicast(addr),
                _ => net::is_global_unicast(addr),
            }))
        });
    }
    r.add(
        "cidr(string) -> net.CIDR",
        "a network in CIDR notation (`10.0.0.0/8`; bits after the prefix are kept, see `masked()`); an error for anything else",
        |_, a| {
            let (addr, bits) = cidr(&a[0])?;
            Ok(Val::Net(Rc::new(Net::Cidr(addr, bits))))
        },
    );
    r.add(
        "isCIDR(string) -> bool",
        "whether `cidr()` takes the text",
        |_, a| Ok(Val::Bool(net::parse_cidr(s(&a[0])).is_ok())),
    );
    for sig in [
        "net.CIDR.containsIP(net.IP) -> bool",
        "net.CIDR.containsIP(string) -> bool",
    ] {
        r.add(sig, "whether the network holds the address", |_, a| {
            Ok(Val::Bool(net::contains_ip(cidr(&a[0])?, ip(&a[1])?)))
        });
    }
    for sig in [
        "net.CIDR.containsCIDR(net.CIDR) -> bool",
        "net.CIDR.containsCIDR(string) -> bool",
    ] {
        r.add(
            sig,
            "whether the network holds every address of the other",
            |_, a| Ok(Val::Bool(net::contains_cidr(cidr(&a[0])?, cidr(&a[1])?))),
        );
    }
    r.add(
        "net.CIDR.ip() -> net.IP",
        "the address as written (`cidr('10.0.0.1/8').ip()` is `10.0.0.1`)",
        |_, a| Ok(Val::Net(Rc::new(Net::Ip(cidr(&a[0])?.0)))),
    );
    r.add(
        "net.CIDR.masked() -> net.CIDR",
        "the network with the bits after the prefix cleared: its canonical form",
        |_, a| {
            let (addr, bits) = cidr(&a[0])?;
            Ok(Val::Net(Rc::new(Net::Cidr(net::masked(addr, bits), bits))))
        },
    );
    r.add(
        "net.CIDR.prefixLength() -> int",
        "the prefix length in bits",
        |_, a| Ok(Val::Int(cidr(&a[0])?.1 as i64)),
    );
}
