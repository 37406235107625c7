//! Who is calling: a bearer token from the environment names a principal. Tokens are
//! compared in constant time, against every principal's, and never logged or echoed.

use subtle::ConstantTimeEq as _;

use crate::config::ServeConfig;

/// A caller the server knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub name: String,
    /// May see every session and reload the deployment.
    pub admin: bool,
}

pub struct Principals {
    known: Vec<(Principal, Vec<u8>)>,
}

impl Principals {
    /// Every `[serve] tokens` entry with its token read from its variable; `Err` names a
    /// variable that is not set (or is empty), never a value.
    pub fn from_config(serve: &ServeConfig) -> Result<Self, String> {
        if serve.tokens.is_empty() {
            return Err("[serve] tokens names no principal: add one, such as `tokens = { alice = \"AGENT_HOST_TOKEN_ALICE\" }`, and set that variable".into());
        }
        let mut known = Vec::new();
        for (name, variable) in &serve.tokens {
            let token = std::env::var(variable).ok().filter(|token| !token.is_empty()).ok_or_else(|| {
                format!("the token of principal `{name}` is read from `{variable}`, which is not set")
            })?;
            let admin = serve.admins.contains(name);
            known.push((Principal { name: name.clone(), admin }, token.into_bytes()));
        }
        Ok(Self { known })
    }

    /// The principal whose token `authorization` (the header's value) bears, if any.
    pub fn identify(&self, authorization: Option<&[u8]>) -> Option<Principal> {
        let token = authorization?.strip_prefix(b"Bearer ")?;
        let mut found = None;
        // Every token is compared, so the time taken says nothing of which one matched.
        for (principal, known) in &self.known {
            if bool::from(known.as_slice().ct_eq(token)) {
                found = Some(principal.clone());
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principals() -> Principals {
        let known = vec![
            (Principal { name: "alice".into(), admin: true }, b"token-a".to_vec()),
            (Principal { name: "bob".into(), admin: false }, b"token-b".to_vec()),
        ];
        Principals { known }
    }

    #[test]
    fn a_bearer_token_names_its_principal_and_nothing_else_does() {
        let principals = principals();
        assert_eq!(principals.identify(Some(b"Bearer token-b")).unwrap().name, "bob");
        assert!(principals.identify(Some(b"Bearer token-a")).unwrap().admin);
        for wrong in [&b"Bearer token-c"[..], b"token-a", b"Bearer token-a ", b"Basic token-a", b"Bearer "] {
            assert_eq!(principals.identify(Some(wrong)), None, "{}", String::from_utf8_lossy(wrong));
        }
        assert_eq!(principals.identify(None), None);
    }
}
