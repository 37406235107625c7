//! Exports that act in the operator's place, each behind a grant of its own. A `review` that
//! approves runs a call the permission policy would have put to the operator, which no
//! `pre-tool-use` hook can do (an ask outweighs any hook's allow); a `queued` turn spends
//! model and tool calls the operator never sent. So implementing one is not enough: the
//! operator grants it under the plugin's `[plugin.grants]` (checked at load, in
//! `requirements.rs`), and a front end lists the plugins granted one at start.

use super::types::Exports;
use crate::config::Grants;

/// One power an export gives a plugin over the operator's session.
#[derive(Debug, Clone, Copy)]
pub struct Power {
    /// The export that holds it.
    pub export: Exports,
    /// The export's name in the contract.
    pub export_name: &'static str,
    /// What a plugin with it may do, after "may": for the load error and the start-up list.
    pub what: &'static str,
    /// The grant, as the line to add under `[plugin.grants]`.
    pub grant: &'static str,
    granted: fn(&Grants) -> bool,
}

impl Power {
    /// Whether `grants` holds this power's grant.
    pub fn granted(&self, grants: &Grants) -> bool {
        (self.granted)(grants)
    }
}

/// Every such power, in the order a load error names a missing one.
pub const POWERS: [Power; 2] = [
    Power {
        export: Exports::REVIEW,
        export_name: "review",
        what: "approve, in the operator's place, calls the permission policy would ask the operator about",
        grant: "review = true",
        granted: |grants| grants.review,
    },
    Power {
        export: Exports::QUEUED,
        export_name: "queued",
        what: "start a turn of model and tool calls after any operator command",
        grant: "start_turns = true",
        granted: |grants| grants.start_turns,
    },
];

/// The powers a plugin implementing `implements` holds.
pub fn held(implements: impl Fn(Exports) -> bool) -> impl Iterator<Item = &'static Power> {
    POWERS.iter().filter(move |power| implements(power.export))
}

/// The first power a plugin implementing `implements` holds without its grant in `grants`.
pub fn ungranted(implements: impl Fn(Exports) -> bool, grants: &Grants) -> Option<&'static Power> {
    held(implements).find(|power| !power.granted(grants))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_export_that_acts_for_the_operator_needs_its_own_grant() {
        let both = |export: Exports| export == Exports::REVIEW || export == Exports::QUEUED;
        let none = Grants::default();
        assert_eq!(ungranted(both, &none).map(|power| power.grant), Some("review = true"));
        let reviews = Grants { review: true, ..Grants::default() };
        assert_eq!(ungranted(both, &reviews).map(|power| power.grant), Some("start_turns = true"));
        let all = Grants { review: true, start_turns: true, ..Grants::default() };
        assert!(ungranted(both, &all).is_none());
        // Judging how a turn ends stays within the deployment's caps: no grant.
        assert!(ungranted(|export| export == Exports::TURN_END, &none).is_none());
        assert_eq!(
            held(|export| export == Exports::QUEUED).map(|power| power.export_name).collect::<Vec<_>>(),
            ["queued"]
        );
    }
}
