//! Resource quantities as the API server reads and stores them.
//!
//! A port of `ParseQuantity` and `Quantity.String()` of k8s.io/apimachinery v0.34.2
//! (pkg/api/resource: quantity.go, amount.go, suffix.go, math.go, and the `inf.Dec`
//! arithmetic of gopkg.in/inf.v0 it falls back to). The API server decodes a quantity with
//! `ParseQuantity` and stores `String()`: for `0.5` that is `500m`, for `1.5Gi` it is
//! `1536Mi`, for `2000` it is `2k`, while a string `ParseQuantity` finds canonical already
//! (`500m`, `01`, `5.`) is kept as written. Rendering writes what the API server would
//! store, so Argo CD shows no difference between the rendered and the live object.
//! `conformance/differential` compares this module with Go on a corpus.
//!
//! Values are kept exact as `mantissa × 10^exponent` in big integers; the places where Go's
//! two code paths (an int64 fast path and an `inf.Dec` slow path) differ in what a user can
//! observe (the kept input string, rounding to nano, the cap of binary quantities) are
//! reproduced where Go decides them.

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// Why `ParseQuantity` refuses a string (its three errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantityError {
    /// `ErrFormatWrong`: "quantities must match the regular expression …".
    Format,
    /// `ErrSuffix`: "unable to parse quantity's suffix".
    Suffix,
    /// `ErrNumeric`: "unable to parse numeric part of quantity".
    Numeric,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

/// An exact decimal: `mantissa × 10^exponent`. The exponent is an `int32`, as Go's `Scale`
/// and `inf.Scale` are, and wraps as theirs do.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Decimal {
    mantissa: BigInt,
    exponent: i32,
}

/// Decimal digits of a magnitude (`0` has none).
fn digits(value: &BigInt) -> i64 {
    if value.is_zero() {
        0
    } else {
        value.magnitude().to_string().len() as i64
    }
}

impl Decimal {
    fn integer(value: BigInt) -> Self {
        Self {
            mantissa: value,
            exponent: 0,
        }
    }

    fn is_zero(&self) -> bool {
        self.mantissa.is_zero()
    }

    /// Compares the values, without writing out huge powers of ten.
    fn cmp_value(&self, other: &Self) -> Ordering {
        let (a, b) = (self.mantissa.sign(), other.mantissa.sign());
        if a != b || self.is_zero() {
            return self
                .mantissa
                .sign()
                .cmp(&other.mantissa.sign())
                .then_with(|| {
                    // Both zero.
                    Ordering::Equal
                });
        }
        // Same sign, both non-zero: compare magnitudes, reversed for negatives.
        let magnitude = |d: &Decimal| digits(&d.mantissa) + i64::from(d.exponent);
        let by_magnitude = magnitude(self).cmp(&magnitude(other));
        let ordering = if by_magnitude.is_ne() {
            by_magnitude
        } else {
            // Same number of integer digits: the exponents differ by no more than the
            // mantissas' lengths, so aligning them is cheap.
            let exponent = self.exponent.min(other.exponent);
            let scale = |d: &Decimal| {
                let shift = u32::try_from(i64::from(d.exponent) - i64::from(exponent)).unwrap_or(0);
                d.mantissa.magnitude() * num_bigint::BigUint::from(10u32).pow(shift)
            };
            scale(self).cmp(&scale(other))
        };
        if self.mantissa.is_negative() {
            ordering.reverse()
        } else {
            ordering
        }
    }

    /// `inf.Dec.Round(x, scale, inf.RoundUp)` to `10^exponent`: away from zero.
    fn round_up_to(&self, exponent: i32) -> Self {
        if self.exponent >= exponent {
            return self.clone();
        }
        let shift = i64::from(exponent) - i64::from(self.exponent);
        let (quotient, exact) = if shift > digits(&self.mantissa) {
            (BigInt::zero(), self.is_zero())
        } else {
            let divisor = BigInt::from(10u32).pow(u32::try_from(shift).unwrap_or(0));
            let (quotient, remainder) = self.mantissa.div_rem(&divisor);
            (quotient, remainder.is_zero())
        };
        let quotient = match (exact, self.mantissa.is_negative()) {
            (true, _) => quotient,
            (false, true) => quotient - 1,
            (false, false) => quotient + 1,
        };
        Self {
            mantissa: quotient,
            exponent,
        }
    }
}

/// A quantity the API server accepts: the string it stores, and the amount.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantity {
    /// `Quantity.String()`: what the API server stores and shows.
    pub stored: String,
    amount: Decimal,
}

impl Quantity {
    /// Whether the stored string still means the amount that was parsed. Go writes a
    /// decimal amount whose exponent has no SI suffix (`1000E` is `10^21`) without its
    /// exponent (`1`): the API server would store another amount.
    pub fn stored_means_the_same(&self) -> bool {
        parse(&self.stored).is_ok_and(|again| again.amount.cmp_value(&self.amount).is_eq())
    }

    pub fn is_negative(&self) -> bool {
        self.amount.mantissa.is_negative()
    }

    pub fn is_zero(&self) -> bool {
        self.amount.is_zero()
    }

    /// `MilliValue() % 1000 == 0`, the API server's test of an integer resource (the milli
    /// value is rounded up).
    pub fn is_whole(&self) -> bool {
        let milli = self.amount.round_up_to(-3);
        milli.exponent >= 0 || {
            let divisor = BigInt::from(10u32).pow(u32::try_from(-milli.exponent).unwrap_or(0));
            milli.mantissa.is_multiple_of(&divisor)
        }
    }

    /// `Value() % page.Value() == 0` (values rounded up to integers), as huge page amounts
    /// are checked.
    pub fn is_multiple_of(&self, page: &Quantity) -> bool {
        let integer = |q: &Quantity| {
            let whole = q.amount.round_up_to(0);
            whole.mantissa * BigInt::from(10u32).pow(u32::try_from(whole.exponent).unwrap_or(0))
        };
        let page = integer(page);
        !page.is_zero() && integer(self).is_multiple_of(&page)
    }

    /// Orders two amounts.
    pub fn cmp_amount(&self, other: &Self) -> Ordering {
        self.amount.cmp_value(&other.amount)
    }
}

/// The digits of a quantity string, as `parseQuantityString` splits it.
struct Scanned<'a> {
    positive: bool,
    /// Sign, digits and decimal point: what `inf.Dec` parses on the slow path.
    value: &'a str,
    /// The whole digits, leading zeros removed (`"0"` when there are none).
    num: &'a str,
    /// The fraction digits.
    denom: &'a str,
    suffix: &'a str,
}

/// `parseQuantityString`.
fn scan(s: &str) -> Result<Scanned<'_>, QuantityError> {
    let b = s.as_bytes();
    let end = b.len();
    let mut positive = true;
    let mut pos = 0;
    if let Some(&sign) = b.first() {
        match sign {
            b'-' => {
                positive = false;
                pos += 1;
            }
            b'+' => pos += 1,
            _ => {}
        }
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Scanned {
            positive,
            value: "0",
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let num_start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok(Scanned {
            positive,
            value: s,
            num: &s[num_start..],
            denom: "",
            suffix: "",
        });
    }
    let num = if pos == num_start {
        "0"
    } else {
        &s[num_start..pos]
    };
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let denom_start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[denom_start..pos];
        if pos >= end {
            return Ok(Scanned {
                positive,
                value: s,
                num,
                denom,
                suffix: "",
            });
        }
    }
    let value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        // Something other than a digit after the suffix's letters and sign.
        return Err(QuantityError::Format);
    }
    Ok(Scanned {
        positive,
        value,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

/// The suffixer's `interpret`: base, exponent and format of a suffix.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = |exponent| Some((10, exponent, Format::DecimalSI));
    let binary = |exponent| Some((2, exponent, Format::BinarySI));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let rest = suffix
                .strip_prefix(['e', 'E'])
                .filter(|rest| !rest.is_empty())?;
            // strconv.ParseInt(rest, 10, 64), then int32() of it, which wraps.
            let parsed = go_parse_int64(rest)?;
            Some((10, parsed as i32, Format::DecimalExponent))
        }
    }
}

/// `strconv.ParseInt(s, 10, 64)`: an optional sign, then decimal digits.
fn go_parse_int64(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The largest amount a binary quantity may have (`maxAllowed`, the largest int64).
fn max_allowed() -> Decimal {
    Decimal::integer(BigInt::from(i64::MAX))
}

/// The pattern the RolloutManager CRD (the operator's, generated by controller-gen for
/// `resource.Quantity`, and ours) puts on a quantity written as a string.
pub const CRD_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// Whether `s` matches [`CRD_PATTERN`] (as Go's `regexp.MatchString`; the differential test
/// compares them).
pub fn matches_crd_pattern(s: &str) -> bool {
    let b = s.as_bytes();
    // `(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))` from `i`: the end of the number, if any.
    let number = |mut i: usize| -> Option<usize> {
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let digits = |mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let start = i;
        i = digits(i);
        if i > start {
            if b.get(i) == Some(&b'.') {
                i = digits(i + 1);
            }
            Some(i)
        } else if b.get(i) == Some(&b'.') && digits(i + 1) > i + 1 {
            Some(digits(i + 1))
        } else {
            None
        }
    };
    let Some(end) = number(0) else {
        return false;
    };
    match &b[end..] {
        [] => true,
        [b'K' | b'M' | b'G' | b'T' | b'P' | b'E', b'i'] => true,
        [b'n' | b'u' | b'm' | b'k' | b'M' | b'G' | b'T' | b'P' | b'E'] => true,
        [b'e' | b'E', ..] => number(end + 1) == Some(b.len()),
        _ => false,
    }
}

/// `ParseQuantity`: the quantity, or why the API server refuses it.
pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
    if s.is_empty() {
        return Err(QuantityError::Format);
    }
    if s == "0" {
        return Ok(Quantity {
            stored: "0".to_owned(),
            amount: Decimal::integer(BigInt::zero()),
        });
    }
    let scanned = scan(s)?;
    let (base, exponent, mut format) = interpret(scanned.suffix).ok_or(QuantityError::Suffix)?;
    if let Some(quantity) = fast_path(s, &scanned, exponent, format)? {
        return Ok(quantity);
    }

    // The slow path: inf.Dec of the numeric part, the suffix applied exactly.
    let mut amount = inf_dec(scanned.value).ok_or(QuantityError::Numeric)?;
    if base == 10 {
        amount.exponent = amount.exponent.wrapping_add(exponent);
    } else {
        let factor = BigInt::one() << u32::try_from(exponent).unwrap_or(0);
        amount.mantissa *= factor;
    }
    let negative = amount.mantissa.is_negative();
    if negative {
        amount.mantissa = -amount.mantissa;
    }
    // Non-zero amounts are rounded up to the smallest representable one, a nano.
    if !amount.is_zero() {
        amount = amount.round_up_to(-9);
    }
    if format == Format::BinarySI && amount.cmp_value(&max_allowed()).is_gt() {
        amount = max_allowed();
    }
    if format == Format::BinarySI
        && amount.cmp_value(&Decimal::integer(BigInt::one())).is_lt()
        && !amount.is_zero()
    {
        format = Format::DecimalSI;
    }
    if negative {
        amount.mantissa = -amount.mantissa;
    }
    Ok(Quantity {
        stored: canonical(&amount, format, false),
        amount,
    })
}

/// The int64 fast path of `ParseQuantity`: taken for short enough numbers, and the only
/// place where Go keeps the input string as the stored one (when it finds it canonical).
fn fast_path(
    s: &str,
    scanned: &Scanned<'_>,
    exponent: i32,
    format: Format,
) -> Result<Option<Quantity>, QuantityError> {
    const MAX_INT64_FACTORS: i64 = 18;
    let digits = (scanned.num.len() + scanned.denom.len()) as i64;
    let (mut scale, precision, mantissa) = match format {
        Format::DecimalExponent | Format::DecimalSI => (exponent, MAX_INT64_FACTORS - digits, 1i64),
        Format::BinarySI if exponent >= 0 && scanned.denom.is_empty() => {
            // Go computes int32(float32(exponent)*3/10); exact for the binary exponents.
            let decimal_digits = i64::from(exponent) * 3 / 10;
            (
                0,
                15 - scanned.num.len() as i64 - decimal_digits - 1,
                1i64 << exponent,
            )
        }
        Format::BinarySI => (0, -1, 1),
    };
    if precision < 0 {
        return Ok(None);
    }
    scale = scale.wrapping_sub(scanned.denom.len() as i32);
    if scale < -9 {
        return Ok(None);
    }
    let shifted = format!("{}{}", scanned.num, scanned.denom);
    let value: i64 = shifted.parse().map_err(|_| QuantityError::Numeric)?;
    let Some(mut result) = value.checked_mul(mantissa) else {
        return Ok(None);
    };
    if !scanned.positive {
        result = -result;
    }
    let amount = Decimal {
        mantissa: BigInt::from(result),
        exponent: scale,
    };
    let canonical_already = match format {
        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    };
    let stored = if canonical_already {
        s.to_owned()
    } else {
        canonical(&amount, format, true)
    };
    Ok(Some(Quantity { stored, amount }))
}

/// `inf.Dec.SetString`: an optional sign, digits with at most one decimal point, at least
/// one digit.
fn inf_dec(text: &str) -> Option<Decimal> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let digits = format!("{whole}{fraction}");
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut mantissa: BigInt = digits.parse().ok()?;
    if negative {
        mantissa = -mantissa;
    }
    Some(Decimal {
        mantissa,
        exponent: (fraction.len() as i32).wrapping_neg(),
    })
}

/// `Quantity.CanonicalizeBytes`: the stored form of an amount (`int64` when it is Go's
/// `int64Amount`, from the fast path, rather than an `inf.Dec`).
fn canonical(amount: &Decimal, format: Format, int64: bool) -> String {
    if amount.is_zero() {
        return "0".to_owned();
    }
    let mut format = format;
    if format == Format::BinarySI {
        let small = amount
            .cmp_value(&Decimal::integer(BigInt::from(-1024)))
            .is_gt()
            && amount
                .cmp_value(&Decimal::integer(BigInt::from(1024)))
                .is_lt();
        if small || amount.round_up_to(0).cmp_value(amount).is_ne() {
            // Not a whole number of bytes (or too small to matter): shown in decimal.
            format = Format::DecimalSI;
        }
    }
    match format {
        Format::DecimalExponent | Format::DecimalSI => {
            let (mantissa, exponent) = if int64 {
                canonical_int64(amount)
            } else {
                canonical_decimal(amount)
            };
            format!("{mantissa}{}", decimal_suffix(exponent, format))
        }
        Format::BinarySI => {
            let mut value = amount.round_up_to(0).mantissa;
            let mut times = 0;
            let factor = BigInt::from(1024);
            loop {
                let (quotient, remainder) = value.div_mod_floor(&factor);
                if value.is_zero() || !remainder.is_zero() {
                    break;
                }
                value = quotient;
                times += 1;
            }
            let suffix = match times {
                1 => "Ki",
                2 => "Mi",
                3 => "Gi",
                4 => "Ti",
                5 => "Pi",
                6 => "Ei",
                _ => "",
            };
            format!("{value}{suffix}")
        }
    }
}

/// `int64Amount.AsCanonicalBytes`: the mantissa without factors of ten, then one step to an
/// exponent that is a multiple of three (by the remainder the exponent had, which matters
/// only when the int32 exponent wraps), or the `inf.Dec` way if the int64 would overflow.
fn canonical_int64(amount: &Decimal) -> (BigInt, i32) {
    let Some(value) = i64::try_from(&amount.mantissa).ok() else {
        return canonical_decimal(amount);
    };
    let negative = value < 0;
    let mut mantissa = value.unsigned_abs();
    let mut exponent = amount.exponent;
    while mantissa >= 10 && mantissa % 10 == 0 {
        mantissa /= 10;
        exponent = exponent.wrapping_add(1);
    }
    let signed = |m: u64| {
        let m = BigInt::from(m);
        if negative { -m } else { m }
    };
    let scaled = |factor: u64| {
        mantissa
            .checked_mul(factor)
            .filter(|m| i64::try_from(*m).is_ok())
    };
    match exponent % 3 {
        1 | -2 => match scaled(10) {
            Some(m) => (signed(m), exponent.wrapping_sub(1)),
            None => canonical_decimal(amount),
        },
        2 | -1 => match scaled(100) {
            Some(m) => (signed(m), exponent.wrapping_sub(2)),
            None => canonical_decimal(amount),
        },
        _ => (signed(mantissa), exponent),
    }
}

/// `infDecAmount.AsCanonicalBytes`: the mantissa without factors of ten, its exponent then
/// lowered to a multiple of three.
fn canonical_decimal(amount: &Decimal) -> (BigInt, i32) {
    let mut mantissa = amount.mantissa.clone();
    let mut exponent = amount.exponent;
    let ten = BigInt::from(10);
    loop {
        let (quotient, remainder) = mantissa.div_rem(&ten);
        if mantissa.is_zero() || !remainder.is_zero() {
            break;
        }
        mantissa = quotient;
        exponent = exponent.wrapping_add(1);
    }
    while exponent % 3 != 0 {
        mantissa *= 10;
        exponent = exponent.wrapping_sub(1);
    }
    (mantissa, exponent)
}

/// The suffix for a decimal exponent. For `DecimalSI` an exponent with no SI prefix has no
/// suffix at all: Go's table lookup fails and the exponent is dropped (see
/// [`Quantity::stored_means_the_same`]).
fn decimal_suffix(exponent: i32, format: Format) -> String {
    match format {
        Format::DecimalExponent if exponent == 0 => String::new(),
        Format::DecimalExponent => format!("e{exponent}"),
        _ => match exponent {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => "",
        }
        .to_owned(),
    }
}

/// Reads back a small stored amount as a float, for messages.
#[cfg(test)]
fn approximate(quantity: &Quantity) -> f64 {
    use num_traits::ToPrimitive;
    quantity.amount.mantissa.to_f64().unwrap_or(f64::NAN) * 10f64.powi(quantity.amount.exponent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(s: &str) -> Option<String> {
        parse(s).ok().map(|q| q.stored)
    }

    #[test]
    fn canonical_forms_are_the_api_servers() {
        for (input, expected) in [
            ("0.5", "500m"),
            ("1.5Gi", "1536Mi"),
            ("2000", "2k"),
            ("500m", "500m"),
            ("01", "01"),
            ("5.", "5."),
            ("1E-2", "10e-3"),
            ("1024Mi", "1Gi"),
            ("99999999999999999999Ei", "9223372036854775807"),
            ("1e-308", "1e-9"),
            ("m", "0"),
        ] {
            assert_eq!(stored(input).as_deref(), Some(expected), "{input}");
        }
        for refused in [
            "", "1e3.5", "1 Gi", "1GB", "abc", "1e", "1_000", "0x10", "1mi",
        ] {
            assert_eq!(stored(refused), None, "{refused}");
        }
        assert!((approximate(&parse("1.5k").unwrap()) - 1500.0).abs() < 1e-9);
    }

    #[test]
    fn a_lost_exponent_is_noticed() {
        let quantity = parse("1000E").unwrap();
        assert_eq!(quantity.stored, "1");
        assert!(!quantity.stored_means_the_same());
        assert!(parse("1e21").unwrap().stored_means_the_same());
    }
}
