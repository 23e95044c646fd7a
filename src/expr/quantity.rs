//! Kubernetes quantities as exact decimals, as `resource.Quantity` keeps them: `100m + 200m` is
//! `300m` exactly, and `1Gi` is `1073741824`.
//!
//! Written out here: k8s-openapi's `Quantity` is only the string, and the grammar is
//! apimachinery's `resource.ParseQuantity`. The value is `mantissa × 10^-scale` in 128 bits,
//! 38 digits: Kubernetes' own tests stay within it; what does not fit is no quantity here.

use std::cmp::Ordering;

/// An exact decimal: `mantissa × 10^-scale`.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    mantissa: i128,
    scale: i32,
}

impl Quantity {
    /// Parses a quantity: a decimal (`1.5`, `.5`, `+2`), then a binary suffix (`Ki` … `Ei`), a
    /// decimal one (`n`, `u`, `m`, `k`, `M` … `E`) or an exponent (`e3`, `E-2`).
    pub fn parse(text: &str) -> Option<Quantity> {
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
            .unwrap_or(text.len());
        let (number, suffix) = text.split_at(split);
        let negative = number.starts_with('-');
        let digits = number.trim_start_matches(['+', '-']);
        if number.len() - digits.len() > 1 || digits.is_empty() || digits == "." {
            return None;
        }
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        if !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let mut mantissa: i128 = 0;
        for b in whole.bytes().chain(fraction.bytes()) {
            mantissa = mantissa
                .checked_mul(10)?
                .checked_add(i128::from(b - b'0'))?;
        }
        if negative {
            mantissa = -mantissa;
        }
        let q = Quantity {
            mantissa,
            scale: i32::try_from(fraction.len()).ok()?,
        };
        let binary = |power: u32| q.checked_mul_int(1024i128.checked_pow(power)?);
        let decimal = |exponent: i32| {
            Some(Quantity {
                mantissa: q.mantissa,
                scale: q.scale.checked_sub(exponent)?,
            })
        };
        match suffix {
            "" => Some(q),
            "Ki" => binary(1),
            "Mi" => binary(2),
            "Gi" => binary(3),
            "Ti" => binary(4),
            "Pi" => binary(5),
            "Ei" => binary(6),
            "n" => decimal(-9),
            "u" => decimal(-6),
            "m" => decimal(-3),
            "k" => decimal(3),
            "M" => decimal(6),
            "G" => decimal(9),
            "T" => decimal(12),
            "P" => decimal(15),
            "E" => decimal(18),
            exponent => {
                let e = exponent.strip_prefix(['e', 'E'])?;
                let digits = e.trim_start_matches(['+', '-']);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                decimal(e.parse::<i32>().ok()?)
            }
        }
    }

    pub fn from_int(i: i64) -> Quantity {
        Quantity {
            mantissa: i128::from(i),
            scale: 0,
        }
    }

    fn checked_mul_int(self, factor: i128) -> Option<Quantity> {
        Some(Quantity {
            mantissa: self.mantissa.checked_mul(factor)?,
            scale: self.scale,
        })
    }

    /// The two mantissas at a common scale, when that fits.
    fn aligned(self, other: Quantity) -> Option<(i128, i128, i32)> {
        let scale = self.scale.max(other.scale);
        let up = |q: Quantity| {
            let by = u32::try_from(scale - q.scale).ok()?;
            q.mantissa.checked_mul(10i128.checked_pow(by)?)
        };
        Some((up(self)?, up(other)?, scale))
    }

    pub fn checked_add(self, other: Quantity) -> Option<Quantity> {
        let (a, b, scale) = self.aligned(other)?;
        Some(Quantity {
            mantissa: a.checked_add(b)?,
            scale,
        })
    }

    pub fn checked_sub(self, other: Quantity) -> Option<Quantity> {
        self.checked_add(Quantity {
            mantissa: other.mantissa.checked_neg()?,
            scale: other.scale,
        })
    }

    pub fn sign(self) -> i64 {
        self.mantissa.signum() as i64
    }

    /// The value as an integer, when it is one that fits in 64 bits.
    pub fn as_i64(self) -> Option<i64> {
        let (m, s) = self.normalised();
        if s > 0 {
            return None;
        }
        let factor = 10i128.checked_pow(u32::try_from(-s).ok()?)?;
        i64::try_from(m.checked_mul(factor)?).ok()
    }

    pub fn as_f64(self) -> f64 {
        format!("{}e{}", self.mantissa, -self.scale)
            .parse()
            .unwrap_or(f64::NAN)
    }

    /// Without trailing zeros in the mantissa.
    fn normalised(self) -> (i128, i32) {
        let (mut m, mut s) = (self.mantissa, self.scale);
        while m != 0 && m % 10 == 0 {
            m /= 10;
            s -= 1;
        }
        if m == 0 {
            s = 0;
        }
        (m, s)
    }

    /// The value as decimal text (`0.8`, `1073741824`).
    pub fn to_decimal_string(self) -> String {
        let (m, s) = self.normalised();
        if s <= 0 {
            let mut out = m.to_string();
            if m != 0 {
                out.extend(std::iter::repeat_n('0', (-s) as usize));
            }
            return out;
        }
        let digits = m.unsigned_abs().to_string();
        let s = s as usize;
        let sign = if m < 0 { "-" } else { "" };
        if digits.len() > s {
            let (w, f) = digits.split_at(digits.len() - s);
            format!("{sign}{w}.{f}")
        } else {
            format!("{sign}0.{}{digits}", "0".repeat(s - digits.len()))
        }
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Quantity) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Quantity) -> Ordering {
        match self.aligned(*other) {
            Some((a, b, _)) => a.cmp(&b),
            // Too far apart to align: the approximations order them.
            None => self
                .as_f64()
                .partial_cmp(&other.as_f64())
                .unwrap_or(Ordering::Equal),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Quantity;

    fn q(t: &str) -> Quantity {
        Quantity::parse(t).unwrap_or_else(|| panic!("{t}"))
    }

    #[test]
    fn quantities_are_exact() {
        assert_eq!(q("100m").checked_add(q("200m")), Some(q("300m")));
        assert_eq!(q("1Gi"), q("1073741824"));
        assert_eq!(q("1.5Gi").as_i64(), Some(1_610_612_736));
        assert_eq!(q("700m"), q("0.7"));
        assert_eq!(q("1e3"), q("1k"));
        assert_eq!(q("800m").to_decimal_string(), "0.8");
        assert_eq!(q("1000m").to_decimal_string(), "1");
        assert_eq!(q("12Mi").to_decimal_string(), "12582912");
        assert_eq!(q("-1.5").to_decimal_string(), "-1.5");
        assert_eq!(q("0.5m").to_decimal_string(), "0.0005");
        assert_eq!(q("1.5").as_i64(), None);
        assert!(q("1e20").as_i64().is_none());
        let big = q("9999999999999999999999999999999999999");
        assert!(big.checked_add(q("1")).unwrap() < big.checked_add(q("2")).unwrap());
        for bad in ["", ".", "1.2.3", "12 apples", "--1", "1Qi", "1e", "0x10"] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
    }
}
