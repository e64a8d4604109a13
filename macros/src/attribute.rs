//! `#[breaker(BREAKER, classify = ..)]`: a function whose body runs through
//! a breaker.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Error, Expr, Ident, ItemFn, ReturnType, Token, Type};

/// The attribute's arguments.
struct Args {
    breaker: Expr,
    classify: Option<Expr>,
    policy: Option<Expr>,
}

const USAGE: &str = "name the breaker: `#[breaker(PAYMENTS)]`, `#[breaker(PAYMENTS, classify = is_unhealthy)]` or `#[breaker(PAYMENTS, policy = POLICY)]`";

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(Error::new(proc_macro2::Span::call_site(), USAGE));
        }
        let breaker: Expr = input.parse()?;
        if let Expr::Assign(assign) = &breaker {
            return Err(Error::new(assign.span(), USAGE));
        }
        let mut args = Args {
            breaker,
            classify: None,
            policy: None,
        };
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            let slot = match key.to_string().as_str() {
                "classify" => &mut args.classify,
                "policy" => &mut args.policy,
                other => {
                    return Err(Error::new(
                        key.span(),
                        format!(
                            "`{other}` is not an argument of `#[breaker]`: it takes `classify = ..` or `policy = ..`"
                        ),
                    ));
                }
            };
            if slot.replace(value).is_some() {
                return Err(Error::new(key.span(), format!("`{key}` is given twice")));
            }
        }
        if let (Some(_), Some(policy)) = (&args.classify, &args.policy) {
            return Err(Error::new(
                policy.span(),
                "give `classify` or `policy`, not both: a policy has its own classifier (`CallPolicy::new().classify(..)`)",
            ));
        }
        Ok(args)
    }
}

/// Whether a type has an `impl Trait` in it (a closure's return type
/// cannot be annotated with one).
fn has_impl_trait(ty: &Type) -> bool {
    fn any_impl(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|tree| match tree {
            TokenTree::Ident(ident) => ident == "impl",
            TokenTree::Group(group) => any_impl(group.stream()),
            _ => false,
        })
    }
    any_impl(ty.to_token_stream())
}

/// Whether a return type is `impl Future<..>`.
fn is_impl_future(ty: &Type) -> bool {
    let Type::ImplTrait(impl_trait) = ty else {
        return false;
    };
    impl_trait.bounds.iter().any(|bound| match bound {
        syn::TypeParamBound::Trait(t) => {
            t.path.segments.last().is_some_and(|s| s.ident == "Future")
        }
        _ => false,
    })
}

/// Expands `#[breaker(args)] fn ...`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args: Args = syn::parse2(args)?;
    let function: ItemFn = syn::parse2(item)?;
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = &function;
    if let Some(constness) = &sig.constness {
        return Err(Error::new(
            constness.span(),
            "`#[breaker]` cannot guard a `const fn`: a breaker is asked at run time",
        ));
    }
    let ReturnType::Type(_, output) = &sig.output else {
        return Err(Error::new(
            sig.ident.span(),
            "`#[breaker]` guards a function that returns a `Result<T, E>`: its `Err` counts as a failure, and a rejected call returns `Err(E::from(rejected))`",
        ));
    };
    if sig.asyncness.is_none() && is_impl_future(output) {
        return Err(Error::new(
            output.span(),
            "`#[breaker]` on a function returning a future: write it as an `async fn`, so that the breaker waits for the future's result",
        ));
    }
    // The call carries the return type's span: a `Result` whose error
    // cannot take a rejection is reported there.
    let span = output.span();
    let krate = quote_spanned!(span=> ::tripword_std);
    let breaker = &args.breaker;
    let policy = match (&args.classify, &args.policy) {
        (Some(classify), _) => {
            quote_spanned!(classify.span()=> #krate::CallPolicy::new().classify(#classify))
        }
        (None, Some(policy)) => policy.to_token_stream(),
        (None, None) => quote!(#krate::CallPolicy::new()),
    };
    let body = if sig.asyncness.is_some() {
        quote_spanned! {span=>
            #krate::declare::__private::call_async(&(#breaker), &(#policy), async #block).await
        }
    } else {
        let annotation = if has_impl_trait(output) {
            TokenStream::new()
        } else {
            quote!(-> #output)
        };
        quote_spanned! {span=>
            #krate::declare::__private::call(&(#breaker), &(#policy), || #annotation #block)
        }
    };
    Ok(quote! {
        #(#attrs)*
        #vis #sig {
            #body
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(args: &str, item: &str) -> Result<String, String> {
        expand(args.parse().unwrap(), item.parse().unwrap())
            .map(|t| t.to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn sync_body_runs_in_a_closure_with_the_return_type() {
        let out = expand_str(
            "PAYMENTS",
            "/// Charges.\npub fn charge(id: u32) -> Result<u32, Error> { Ok(id) }",
        )
        .unwrap();
        assert_eq!(
            out,
            "# [doc = \" Charges.\"] pub fn charge (id : u32) -> Result < u32 , Error > { \
             :: tripword_std :: declare :: __private :: call (& (PAYMENTS) , & (:: tripword_std :: CallPolicy :: new ()) , \
             || -> Result < u32 , Error > { Ok (id) }) }"
        );
    }

    #[test]
    fn async_body_runs_in_an_async_block() {
        let out = expand_str(
            "self.breaker, classify = is_unhealthy",
            "async fn get(&self) -> Result<(), E> { Ok(()) }",
        )
        .unwrap();
        assert_eq!(
            out,
            "async fn get (& self) -> Result < () , E > { \
             :: tripword_std :: declare :: __private :: call_async (& (self . breaker) , \
             & (:: tripword_std :: CallPolicy :: new () . classify (is_unhealthy)) , async { Ok (()) }) . await }"
        );
    }

    #[test]
    fn a_policy_and_impl_trait_returns() {
        let out = expand_str(
            "B, policy = POLICY,",
            "fn f() -> Result<impl Display, E> { Ok(1) }",
        )
        .unwrap();
        assert!(out.contains("& (POLICY) , || { Ok (1) }"), "{out}");
    }

    #[test]
    fn errors() {
        let err = |args: &str, item: &str| expand_str(args, item).unwrap_err();
        assert!(err("", "fn f() -> Result<(), ()> { Ok(()) }").starts_with("name the breaker"));
        assert!(
            err("classify = c", "fn f() -> Result<(), ()> { Ok(()) }")
                .starts_with("name the breaker")
        );
        assert!(err("B, retries = 3", "fn f() {}").starts_with("`retries` is not an argument"));
        assert_eq!(
            err("B, classify = a, classify = b", "fn f() {}"),
            "`classify` is given twice"
        );
        assert!(
            err("B, classify = a, policy = b", "fn f() {}")
                .starts_with("give `classify` or `policy`")
        );
        assert!(
            err("B", "fn f() { }")
                .starts_with("`#[breaker]` guards a function that returns a `Result")
        );
        assert!(err("B", "const fn f() -> Result<(), ()> { Ok(()) }").contains("`const fn`"));
        assert!(
            err(
                "B",
                "fn f() -> impl Future<Output = Result<(), ()>> { async { Ok(()) } }"
            )
            .contains("write it as an `async fn`")
        );
        assert!(err("B", "struct S;").starts_with("expected `fn`"));
    }
}
