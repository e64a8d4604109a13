//! Durations written as literals with a unit: `30s`, `250ms`, `1.5s`.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::{Error, Expr, ExprLit, Lit};

/// The units a duration literal may carry, and their length in nanoseconds.
const UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// The units, as errors list them.
const UNIT_NAMES: &str = "ns, us, ms, s, m, min, h";

/// A duration setting's value as a `Duration` expression: a number literal
/// with a unit becomes `Duration::new(secs, nanos)`; any other expression
/// is kept as written (it must be a `const` `Duration`).
pub(crate) fn expand(key: &str, value: &Expr) -> Result<TokenStream, Error> {
    let Expr::Lit(ExprLit { lit, .. }) = value else {
        return Ok(quote_spanned!(expr_span(value)=> #value));
    };
    let (digits, suffix, span) = match lit {
        Lit::Int(int) => (int.base10_digits(), int.suffix(), int.span()),
        Lit::Float(float) => (float.base10_digits(), float.suffix(), float.span()),
        _ => {
            return Err(Error::new(
                lit.span(),
                format!(
                    "`{key}` is a duration: a number with a unit (`30s`, `250ms`, `1.5s`) or a `const` `Duration` expression"
                ),
            ));
        }
    };
    let nanos = nanos(key, digits, suffix, span)?;
    let secs = u64::try_from(nanos / NANOS_PER_SEC)
        .map_err(|_| Error::new(span, format!("`{key}` is too long for a `Duration`")))?;
    let subsec = (nanos % NANOS_PER_SEC) as u32;
    Ok(quote_spanned!(span=> ::core::time::Duration::new(#secs, #subsec)))
}

/// The span of an expression, for errors about its type.
fn expr_span(value: &Expr) -> Span {
    syn::spanned::Spanned::span(value)
}

/// The nanoseconds of `digits` (a decimal number, no exponent) in `unit`.
pub(crate) fn nanos(key: &str, digits: &str, unit: &str, span: Span) -> Result<u128, Error> {
    if unit.is_empty() {
        return Err(Error::new(
            span,
            format!(
                "`{key}` needs a unit: `{digits}s`, `{digits}ms` (units {UNIT_NAMES}), or a `const` `Duration` expression"
            ),
        ));
    }
    let Some(&(_, per_unit)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(Error::new(
            span,
            format!("`{unit}` is not a unit of time: the units are {UNIT_NAMES}"),
        ));
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let decimal = |part: &str| -> Option<u128> {
        if part.bytes().all(|b| b.is_ascii_digit()) {
            part.parse::<u128>().ok().or(part.is_empty().then_some(0))
        } else {
            None
        }
    };
    let (Some(whole_value), Some(fraction_value)) = (decimal(whole), decimal(fraction)) else {
        return Err(Error::new(
            span,
            format!("`{key}` must be a plain decimal number with a unit: `30s`, `1.5s`"),
        ));
    };
    let too_long = || Error::new(span, format!("`{key}` is too long for a `Duration`"));
    let scale = u32::try_from(fraction.len())
        .ok()
        .and_then(|len| 10u128.checked_pow(len))
        .ok_or_else(too_long)?;
    let whole_nanos = whole_value.checked_mul(per_unit).ok_or_else(too_long)?;
    let fraction_nanos = fraction_value.checked_mul(per_unit).ok_or_else(too_long)?;
    if fraction_nanos % scale != 0 {
        return Err(Error::new(
            span,
            format!("`{key}` = {digits}{unit} is not a whole number of nanoseconds"),
        ));
    }
    whole_nanos
        .checked_add(fraction_nanos / scale)
        .ok_or_else(too_long)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nanos_of(digits: &str, unit: &str) -> Result<u128, String> {
        nanos("open_for", digits, unit, Span::call_site()).map_err(|e| e.to_string())
    }

    #[test]
    fn units() {
        assert_eq!(nanos_of("7", "ns"), Ok(7));
        assert_eq!(nanos_of("7", "us"), Ok(7_000));
        assert_eq!(nanos_of("250", "ms"), Ok(250_000_000));
        assert_eq!(nanos_of("30", "s"), Ok(30_000_000_000));
        assert_eq!(nanos_of("2", "m"), Ok(120_000_000_000));
        assert_eq!(nanos_of("2", "min"), Ok(120_000_000_000));
        assert_eq!(nanos_of("1", "h"), Ok(3_600_000_000_000));
    }

    #[test]
    fn fractions_are_exact() {
        assert_eq!(nanos_of("1.5", "s"), Ok(1_500_000_000));
        assert_eq!(nanos_of("0.25", "ms"), Ok(250_000));
        assert_eq!(
            nanos_of("1.5", "ns").unwrap_err(),
            "`open_for` = 1.5ns is not a whole number of nanoseconds"
        );
        assert_eq!(nanos_of("2.", "s"), Ok(2_000_000_000));
    }

    #[test]
    fn refused() {
        assert_eq!(
            nanos_of("30", "").unwrap_err(),
            "`open_for` needs a unit: `30s`, `30ms` (units ns, us, ms, s, m, min, h), or a `const` `Duration` expression"
        );
        assert_eq!(
            nanos_of("30", "days").unwrap_err(),
            "`days` is not a unit of time: the units are ns, us, ms, s, m, min, h"
        );
        assert!(
            nanos_of("1e3", "s")
                .unwrap_err()
                .contains("plain decimal number")
        );
        let huge = format!("{}", u128::MAX);
        assert!(nanos_of(&huge, "h").unwrap_err().contains("too long"));
        let long_fraction = format!("0.{}", "0".repeat(40));
        assert!(
            nanos_of(&long_fraction, "s")
                .unwrap_err()
                .contains("too long")
        );
    }

    #[test]
    fn expands_to_duration_new() {
        let value: Expr = syn::parse_str("1.5s").unwrap();
        let tokens = expand("open_for", &value).unwrap().to_string();
        assert_eq!(
            tokens,
            ":: core :: time :: Duration :: new (1u64 , 500000000u32)"
        );
        let value: Expr = syn::parse_str("Duration::from_secs(3)").unwrap();
        let tokens = expand("open_for", &value).unwrap().to_string();
        assert_eq!(tokens, "Duration :: from_secs (3)");
        let value: Expr = syn::parse_str("\"30s\"").unwrap();
        let err = expand("open_for", &value).unwrap_err().to_string();
        assert!(err.starts_with("`open_for` is a duration"), "{err}");
        let value: Expr = syn::parse_str(&format!("{}s", u64::MAX as u128 + 1)).unwrap();
        let err = expand("open_for", &value).unwrap_err().to_string();
        assert_eq!(err, "`open_for` is too long for a `Duration`");
    }
}
