//! Who is calling: a bearer token from the environment names a principal. Tokens are
//! compared in constant time, against every principal's, and never logged or echoed; an
//! address that keeps presenting wrong ones is answered more and more slowly.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use agent_host::config::ServeConfig;
use agent_host::unpoisoned::LockUnpoisoned as _;

/// The shortest token accepted: shorter ones can be guessed.
pub const MIN_TOKEN_BYTES: usize = 16;

/// Who a one-time token signs in as (see `Principals::one_time`).
pub const ONE_TIME_PRINCIPAL: &str = "operator";
/// Random bytes in a one-time token (written as twice as many hex digits).
const ONE_TIME_TOKEN_BYTES: usize = 24;

/// A caller the server knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub name: String,
    /// May see every session and reload the deployment.
    pub admin: bool,
}

pub struct Principals {
    /// Each principal with the SHA-256 of its token: every comparison is of 32 bytes, so
    /// its time says nothing of a token's length either.
    known: Vec<(Principal, [u8; 32])>,
}

impl Principals {
    /// Every `[serve] tokens` entry with its token read from its variable; `Err` names a
    /// variable that is not set, is empty or holds too short a token, never a value.
    pub fn from_config(serve: &ServeConfig) -> Result<Self, String> {
        if serve.tokens.is_empty() {
            return Err("[serve] tokens names no principal (a one-time token is made only when listening on loopback): \
                        add one, such as `tokens = { alice = \"AGENT_HOST_TOKEN_ALICE\" }`, and set that variable"
                .into());
        }
        let mut known = Vec::new();
        for (name, variable) in &serve.tokens {
            let token = std::env::var(variable).ok().filter(|token| !token.is_empty()).ok_or_else(|| {
                format!("the token of principal `{name}` is read from `{variable}`, which is not set")
            })?;
            if token.len() < MIN_TOKEN_BYTES {
                return Err(format!(
                    "the token of principal `{name}` (in `{variable}`) is shorter than {MIN_TOKEN_BYTES} bytes, \
                     short enough to guess: use a random one, such as the output of `openssl rand -hex 24`"
                ));
            }
            let admin = serve.admins.contains(name);
            known.push((Principal { name: name.clone(), admin }, digest(token.as_bytes())));
        }
        Ok(Self { known })
    }

    /// One admin principal, [`ONE_TIME_PRINCIPAL`], and its token, made now from the
    /// operating system's randomness: what a server on loopback with no `[serve] tokens`
    /// signs its operator in with. It lasts as long as the process and is never logged.
    pub fn one_time() -> Result<(Self, String), String> {
        let mut bytes = [0u8; ONE_TIME_TOKEN_BYTES];
        getrandom::fill(&mut bytes).map_err(|error| format!("cannot make a one-time token: {error}"))?;
        let token: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        let operator = Principal { name: ONE_TIME_PRINCIPAL.to_owned(), admin: true };
        Ok((Self { known: vec![(operator, digest(token.as_bytes()))] }, token))
    }

    /// The principal whose token `authorization` (the header's value) bears, if any.
    pub fn identify(&self, authorization: Option<&[u8]>) -> Option<Principal> {
        let token = digest(authorization?.strip_prefix(b"Bearer ")?);
        let mut found = None;
        // Every token is compared, so the time taken says nothing of which one matched.
        for (principal, known) in &self.known {
            if bool::from(known.ct_eq(&token)) {
                found = Some(principal.clone());
            }
        }
        found
    }
}

fn digest(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

/// Wrong tokens an address may present within [`FailedTokens::WINDOW`] before its `401`s
/// are delayed.
const FREE_FAILURES: u32 = 5;
/// The first delay past them, doubled at each further failure up to [`LONGEST_DELAY`].
const FIRST_DELAY: Duration = Duration::from_millis(250);
const LONGEST_DELAY: Duration = Duration::from_secs(4);
/// Addresses remembered at once; past it, new ones share one record (so an attacker with
/// many addresses slows himself down rather than the server's memory up).
const REMEMBERED: usize = 4_096;

/// Wrong tokens by address, to slow down guessing: each `401` past a few is answered after
/// a delay that grows with the address's recent failures. A right token is never delayed.
#[derive(Default)]
pub struct FailedTokens {
    by_peer: Mutex<HashMap<Option<IpAddr>, (u32, Instant)>>,
}

impl FailedTokens {
    /// Failures older than this are forgotten.
    pub const WINDOW: Duration = Duration::from_secs(60);

    /// Records a wrong token from `peer` at `now`; how long to wait before answering it.
    pub fn failed(&self, peer: IpAddr, now: Instant) -> Duration {
        let mut by_peer = self.by_peer.lock_unpoisoned();
        let key = Some(bucket(peer));
        if !by_peer.contains_key(&key) && by_peer.len() >= REMEMBERED {
            by_peer.retain(|_, (_, since)| now.duration_since(*since) < Self::WINDOW);
        }
        let key = if by_peer.contains_key(&key) || by_peer.len() < REMEMBERED { key } else { None };
        let (count, since) = by_peer.entry(key).or_insert((0, now));
        if now.duration_since(*since) >= Self::WINDOW {
            *count = 0;
            *since = now;
        }
        *count += 1;
        match count.checked_sub(FREE_FAILURES + 1) {
            None => Duration::ZERO,
            Some(past) => FIRST_DELAY.saturating_mul(1 << past.min(16)).min(LONGEST_DELAY),
        }
    }
}

/// The address a peer is counted under: an IPv6 host usually holds its whole /64.
fn bucket(peer: IpAddr) -> IpAddr {
    match peer.to_canonical() {
        IpAddr::V6(v6) => {
            let mut octets = v6.octets();
            octets[8..].fill(0);
            IpAddr::from(octets)
        }
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principals() -> Principals {
        let known = vec![
            (Principal { name: "alice".into(), admin: true }, digest(b"token-a")),
            (Principal { name: "bob".into(), admin: false }, digest(b"token-b")),
        ];
        Principals { known }
    }

    #[test]
    fn a_bearer_token_names_its_principal_and_nothing_else_does() {
        let principals = principals();
        assert_eq!(principals.identify(Some(b"Bearer token-b")).unwrap().name, "bob");
        assert!(principals.identify(Some(b"Bearer token-a")).unwrap().admin);
        for wrong in [
            &b"Bearer token-c"[..],
            b"token-a",
            b"Bearer token-a ",
            b"Basic token-a",
            b"Bearer ",
            b"Bearer token-",
        ] {
            assert_eq!(principals.identify(Some(wrong)), None, "{}", String::from_utf8_lossy(wrong));
        }
        assert_eq!(principals.identify(None), None);
    }

    #[test]
    fn wrong_tokens_from_one_address_are_answered_slower_and_slower_and_others_are_not() {
        let failed = FailedTokens::default();
        let start = Instant::now();
        let guesser: IpAddr = "192.0.2.7".parse().unwrap();
        let delays: Vec<Duration> = (0..12).map(|_| failed.failed(guesser, start)).collect();
        assert!(delays[..5].iter().all(Duration::is_zero), "a few typos cost nothing: {delays:?}");
        assert!(delays[5] > Duration::ZERO, "{delays:?}");
        assert!(delays.windows(2).all(|pair| pair[1] >= pair[0]), "{delays:?}");
        assert_eq!(delays[11], LONGEST_DELAY, "{delays:?}");
        assert_eq!(failed.failed("192.0.2.8".parse().unwrap(), start), Duration::ZERO, "another address");
        let same_host: IpAddr = "2001:db8::1".parse().unwrap();
        for _ in 0..FREE_FAILURES {
            failed.failed(same_host, start);
        }
        assert!(failed.failed("2001:db8::2".parse().unwrap(), start) > Duration::ZERO, "one /64");
        let later = start + FailedTokens::WINDOW;
        assert_eq!(failed.failed(guesser, later), Duration::ZERO, "forgotten after the window");
    }
}
