//! `breakers!`: named breakers in `static`s.
//!
//! ```text
//! breakers! {
//!     /// docs
//!     pub PAYMENTS: failure_threshold = 5, open_for = 30s, probe_timeout = 10s;
//!     SEARCH;
//! }
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Attribute, Error, Expr, Ident, LitStr, Path, Token, Visibility};

use crate::duration;

/// The keys a declaration takes, as the error for an unknown one lists
/// them.
const KEYS: &str = "failure_threshold, open_for, exponential_backoff, probe_timeout, horizon, abandon_as, probes, probes_to_close, ramp, name, clock, word, observer";

/// Everything `breakers!` was given.
pub(crate) struct Declarations {
    entries: Vec<Entry>,
}

/// One breaker: `#[attrs] vis NAME: key = value, ...;`.
struct Entry {
    attrs: Vec<Attribute>,
    vis: Visibility,
    ident: Ident,
    settings: Vec<Setting>,
}

/// One `key = value`.
struct Setting {
    key: Ident,
    value: Expr,
}

impl Parse for Setting {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let value: Expr = input.parse()?;
        Ok(Setting { key, value })
    }
}

impl Parse for Declarations {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut entries = Vec::new();
        while !input.is_empty() {
            let attrs = input.call(Attribute::parse_outer)?;
            let vis: Visibility = input.parse()?;
            let ident: Ident = input.parse().map_err(|e| {
                Error::new(
                    e.span(),
                    "expected a breaker's name: `pub PAYMENTS: failure_threshold = 5, open_for = 30s;`",
                )
            })?;
            let mut settings = Vec::new();
            if input.peek(Token![:]) {
                input.parse::<Token![:]>()?;
                settings.push(input.parse::<Setting>()?);
                while input.peek(Token![,]) {
                    input.parse::<Token![,]>()?;
                    if input.is_empty() || input.peek(Token![;]) {
                        break;
                    }
                    settings.push(input.parse::<Setting>()?);
                }
            }
            if !input.is_empty() {
                input.parse::<Token![;]>().map_err(|e| {
                    Error::new(
                        e.span(),
                        "expected `,` and another setting, or `;` before the next breaker",
                    )
                })?;
            }
            entries.push(Entry {
                attrs,
                vis,
                ident,
                settings,
            });
        }
        Ok(Declarations { entries })
    }
}

/// Expands `breakers! { ... }`.
pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let declarations: Declarations = syn::parse2(input)?;
    let mut out = TokenStream::new();
    let mut errors: Option<Error> = None;
    for entry in &declarations.entries {
        match entry.expand() {
            Ok(tokens) => out.extend(tokens),
            Err(e) => match &mut errors {
                Some(all) => all.combine(e),
                None => errors = Some(e),
            },
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

impl Entry {
    fn expand(&self) -> syn::Result<TokenStream> {
        let Entry {
            attrs, vis, ident, ..
        } = self;
        let span = ident.span();
        let mut name = LitStr::new(&ident.to_string().to_lowercase(), span);
        let mut setters = TokenStream::new();
        let mut clock: Option<&Path> = None;
        let mut word: Option<&Path> = None;
        let mut observer: Option<&Expr> = None;
        let mut seen: Vec<String> = Vec::new();
        let mut described: Vec<String> = Vec::new();
        for Setting { key, value } in &self.settings {
            let key_name = key.to_string();
            if seen.contains(&key_name) {
                return Err(Error::new(
                    key.span(),
                    format!("`{key_name}` is set twice for `{ident}`"),
                ));
            }
            seen.push(key_name.clone());
            match key_name.as_str() {
                "failure_threshold" | "abandon_as" | "probes" | "probes_to_close" => {
                    setters.extend(quote_spanned!(value.span()=> .#key(#value)));
                }
                "ramp" => {
                    let ramp = ramp(value)?;
                    setters.extend(quote_spanned!(value.span()=> .ramp(#ramp)));
                }
                "open_for" | "exponential_backoff" | "probe_timeout" | "horizon" => {
                    let duration = duration::expand(&key_name, value)?;
                    setters.extend(quote_spanned!(value.span()=> .#key(#duration)));
                }
                "name" => {
                    name = syn::parse2(value.to_token_stream()).map_err(|_| {
                        Error::new(
                            value.span(),
                            "`name` is a string literal: `name = \"payments\"`",
                        )
                    })?;
                }
                "clock" => clock = Some(path(&key_name, value)?),
                "word" => word = Some(path(&key_name, value)?),
                "observer" => observer = Some(value),
                _ => {
                    return Err(Error::new(
                        key.span(),
                        format!("`{key_name}` is not a breaker setting; the settings are {KEYS}"),
                    ));
                }
            }
            if !matches!(key_name.as_str(), "name" | "observer") {
                described.push(format!("{key_name} = {}", source_text(value)));
            }
        }

        // Every path carries the name's span, so that a config out of range
        // (an error where the `static` is evaluated) points at the name.
        let krate = quote_spanned!(span=> ::tripword_std);
        let clock_path =
            clock.map_or_else(|| quote!(#krate::MonotonicClock), ToTokens::to_token_stream);
        let word_path = word.map_or_else(
            || quote!(#krate::declare::__private::W64),
            ToTokens::to_token_stream,
        );
        let (observer_type, observer_value) = match observer {
            None => (quote!(()), quote!(())),
            Some(make) => {
                let arg = Ident::new("name", Span::mixed_site());
                (
                    quote!(#krate::LazyObserver),
                    quote_spanned!(make.span()=>
                        #krate::LazyObserver::new(#name, |#arg| #krate::declare::__private::boxed(#arg, #make))
                    ),
                )
            }
        };
        let ty = if observer.is_none() && clock.is_none() && word.is_none() {
            quote!(#krate::NamedBreaker)
        } else {
            quote!(#krate::NamedBreaker<#observer_type, #clock_path, #word_path>)
        };
        let has_docs = attrs.iter().any(|a| a.path().is_ident("doc"));
        let summary = if described.is_empty() {
            "the defaults of `Settings::new()`".to_string()
        } else {
            format!("`{}`", described.join(", "))
        };
        let mut generated = format!(
            "The circuit breaker `{}`, declared with `tripword_std::breakers!`: {summary}.",
            name.value()
        );
        if has_docs {
            generated.insert_str(0, "\n\n");
        }
        Ok(quote_spanned! {span=>
            #(#attrs)*
            #[doc = #generated]
            #vis static #ident: #ty = #krate::NamedBreaker::new(
                #name,
                #krate::Settings::new() #setters,
                #clock_path,
                #observer_value,
            );
        })
    }
}

/// A `clock` or `word` value: a path (a unit struct, a width type).
fn path<'a>(key: &str, value: &'a Expr) -> syn::Result<&'a Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() => Ok(&p.path),
        _ => Err(Error::new(
            value.span(),
            match key {
                "clock" => "`clock` names a unit-struct clock: `clock = MillisClock`",
                _ => "`word` names a word width: `word = W32`",
            },
        )),
    }
}

/// A `ramp` value: `progressive(1s)`, `linear(10s, 4)` or `stages(500ms,
/// [100, 1000, 5000])`, the constructors of `RampSettings` with duration
/// literals; any other expression is kept as written (a `const`
/// `RampSettings`).
fn ramp(value: &Expr) -> syn::Result<TokenStream> {
    let Expr::Call(call) = value else {
        return Ok(value.to_token_stream());
    };
    let Expr::Path(func) = &*call.func else {
        return Ok(value.to_token_stream());
    };
    let Some(name) = func.path.get_ident().map(Ident::to_string) else {
        return Ok(value.to_token_stream());
    };
    let args: Vec<&Expr> = call.args.iter().collect();
    let arity = match name.as_str() {
        "progressive" => 1,
        "linear" | "stages" => 2,
        _ => return Ok(value.to_token_stream()),
    };
    if args.len() != arity {
        return Err(Error::new(
            call.span(),
            "`ramp` is `progressive(1s)`, `linear(10s, 4)`, `stages(500ms, [100, 1000, 5000])` (shares in basis points) or a `const` `RampSettings`",
        ));
    }
    let ident = Ident::new(&name, func.span());
    let step = duration::expand("ramp", args[0])?;
    let krate = quote_spanned!(value.span()=> ::tripword_std);
    Ok(match name.as_str() {
        "progressive" => quote_spanned!(value.span()=> #krate::RampSettings::#ident(#step)),
        _ => {
            let second = args[1];
            let second = match second {
                Expr::Array(_) => quote_spanned!(second.span()=> &#second),
                _ => second.to_token_stream(),
            };
            quote_spanned!(value.span()=> #krate::RampSettings::#ident(#step, #second))
        }
    })
}

/// A setting as the user wrote it, on one line, for the generated docs.
fn source_text(value: &Expr) -> String {
    let text = value
        .span()
        .source_text()
        .unwrap_or_else(|| value.to_token_stream().to_string());
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(source: &str) -> Result<String, String> {
        let tokens: TokenStream = source.parse().unwrap();
        expand(tokens)
            .map(|t| t.to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_breaker_with_settings() {
        let out = expand_str(
            "/// Payments.\n pub PAYMENTS: failure_threshold = 5, open_for = 30s, probe_timeout = 1.5s, abandon_as = Outcome::Ignored;",
        )
        .unwrap();
        assert!(
            out.contains("pub static PAYMENTS : :: tripword_std :: NamedBreaker ="),
            "{out}"
        );
        assert!(out.contains("\"payments\""), "{out}");
        assert!(out.contains(". failure_threshold (5)"), "{out}");
        assert!(
            out.contains(". open_for (:: core :: time :: Duration :: new (30u64 , 0u32))"),
            "{out}"
        );
        assert!(
            out.contains(
                ". probe_timeout (:: core :: time :: Duration :: new (1u64 , 500000000u32))"
            ),
            "{out}"
        );
        assert!(out.contains(". abandon_as (Outcome :: Ignored)"), "{out}");
        assert!(
            out.contains(":: tripword_std :: MonotonicClock , ()"),
            "{out}"
        );
        // The user's docs, then the settings.
        let user = out.find("Payments.").unwrap();
        let generated = out.find("declared with").unwrap();
        assert!(user < generated, "{out}");
    }

    #[test]
    fn several_and_defaults() {
        let out = expand_str("A: open_for = 1s; pub(crate) B; C: failure_threshold = 2,").unwrap();
        assert!(out.contains("static A :"), "{out}");
        assert!(out.contains("pub (crate) static B :"), "{out}");
        assert!(out.contains("the defaults of `Settings::new()`"), "{out}");
        assert!(out.contains("static C :"), "{out}");
        assert_eq!(expand_str("").unwrap(), "");
    }

    #[test]
    fn name_clock_word_observer() {
        let out = expand_str(
            "X: name = \"x-v2\", clock = MillisClock, word = W32, observer = TracingObserver::new, exponential_backoff = Duration::from_secs(9), horizon = 1h;",
        )
        .unwrap();
        assert!(out.contains("\"x-v2\""), "{out}");
        assert!(out.contains(":: tripword_std :: NamedBreaker < :: tripword_std :: LazyObserver , MillisClock , W32 >"), "{out}");
        assert!(
            out.contains(":: tripword_std :: LazyObserver :: new (\"x-v2\""),
            "{out}"
        );
        assert!(
            out.contains("boxed (name , TracingObserver :: new)"),
            "{out}"
        );
        assert!(
            out.contains(". exponential_backoff (Duration :: from_secs (9))"),
            "{out}"
        );
        assert!(
            out.contains(". horizon (:: core :: time :: Duration :: new (3600u64 , 0u32))"),
            "{out}"
        );
        // Only a clock: the other parameters are the defaults, written out.
        let out = expand_str("Y: clock = tripword_std::MillisClock;").unwrap();
        assert!(out.contains("NamedBreaker < () , tripword_std :: MillisClock , :: tripword_std :: declare :: __private :: W64 >"), "{out}");
    }

    #[test]
    fn probes_and_a_ramp() {
        let out = expand_str(
            "A: probes = 3, probes_to_close = 2, ramp = progressive(1s); B: ramp = linear(10s, 4); C: ramp = stages(500ms, [100, 5000]); D: ramp = MY_RAMP;",
        )
        .unwrap();
        assert!(out.contains(". probes (3)"), "{out}");
        assert!(out.contains(". probes_to_close (2)"), "{out}");
        assert!(
            out.contains(". ramp (:: tripword_std :: RampSettings :: progressive (:: core :: time :: Duration :: new (1u64 , 0u32)))"),
            "{out}"
        );
        assert!(
            out.contains(":: tripword_std :: RampSettings :: linear (:: core :: time :: Duration :: new (10u64 , 0u32) , 4)"),
            "{out}"
        );
        assert!(
            out.contains(":: tripword_std :: RampSettings :: stages (:: core :: time :: Duration :: new (0u64 , 500000000u32) , & [100 , 5000])"),
            "{out}"
        );
        assert!(out.contains(". ramp (MY_RAMP)"), "{out}");
        let err = expand_str("X: ramp = linear(10s);").unwrap_err();
        assert!(err.starts_with("`ramp` is `progressive(1s)`"), "{err}");
        let err = expand_str("X: ramp = progressive(10);").unwrap_err();
        assert!(err.starts_with("`ramp` needs a unit"), "{err}");
    }

    #[test]
    fn errors() {
        let err = expand_str("X: failure_treshold = 5;").unwrap_err();
        assert!(
            err.starts_with(
                "`failure_treshold` is not a breaker setting; the settings are failure_threshold,"
            ),
            "{err}"
        );
        let err = expand_str("X: open_for = 1s, open_for = 2s;").unwrap_err();
        assert_eq!(err, "`open_for` is set twice for `X`");
        let err = expand_str("X: open_for = 30;").unwrap_err();
        assert!(err.starts_with("`open_for` needs a unit"), "{err}");
        let err = expand_str("X: name = payments;").unwrap_err();
        assert!(err.starts_with("`name` is a string literal"), "{err}");
        let err = expand_str("X: clock = MillisClock::new();").unwrap_err();
        assert!(
            err.starts_with("`clock` names a unit-struct clock"),
            "{err}"
        );
        let err = expand_str("X: word = 32;").unwrap_err();
        assert!(err.starts_with("`word` names a word width"), "{err}");
        let err = expand_str("X: open_for = 1s Y: open_for = 2s;").unwrap_err();
        assert!(err.starts_with("expected `,` and another setting"), "{err}");
        let err = expand_str("pub 5;").unwrap_err();
        assert!(err.starts_with("expected a breaker's name"), "{err}");
        // Every entry's error at once.
        let err = expand(
            "A: open_for = 1; B: retries = 2;"
                .parse::<TokenStream>()
                .unwrap(),
        )
        .unwrap_err();
        assert_eq!(err.into_iter().count(), 2);
    }
}
