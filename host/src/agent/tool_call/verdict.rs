//! Folding many hooks' answers into one, deterministically: hooks run in config order, and
//! any deny wins over ask, ask over allow.

/// The folded permission decision for one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Ask { reason: String, by: String },
    Deny { reason: String, by: String },
}

impl Verdict {
    fn rank(&self) -> u8 {
        match self {
            Verdict::Allow => 0,
            Verdict::Ask { .. } => 1,
            Verdict::Deny { .. } => 2,
        }
    }

    /// Combines with a later hook's decision: the stronger wins; between equals, the
    /// earlier hook's reason stands.
    pub fn fold(self, other: Verdict) -> Verdict {
        if other.rank() > self.rank() { other } else { self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(by: &str) -> Verdict {
        Verdict::Ask { reason: "r".into(), by: by.into() }
    }
    fn deny(by: &str) -> Verdict {
        Verdict::Deny { reason: "r".into(), by: by.into() }
    }

    #[test]
    fn deny_beats_ask_beats_allow_in_any_order() {
        let orders = [
            vec![Verdict::Allow, ask("a"), deny("d")],
            vec![deny("d"), ask("a"), Verdict::Allow],
            vec![ask("a"), deny("d"), Verdict::Allow],
        ];
        for order in orders {
            let folded = order.into_iter().fold(Verdict::Allow, Verdict::fold);
            assert_eq!(folded, deny("d"));
        }
        assert_eq!(Verdict::Allow.fold(ask("a")).fold(Verdict::Allow), ask("a"));
        assert_eq!(ask("first").fold(ask("second")), ask("first"));
    }
}
