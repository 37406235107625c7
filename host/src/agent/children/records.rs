//! What is stored of child agents, in the sessions' own bags (namespaces of the host's,
//! which no plugin can write): each child's record in its parent's bag, and in the child's
//! bag its link to the parent and what narrows it. Both are committed with their session's
//! steps, so a crash leaves them as consistent as the histories they describe.

use serde::{Deserialize, Serialize};

use crate::events::AgentState;
use crate::runtime::host_api::AgentStatus;
use crate::state::StateBag;

/// The parent's bag: one key per child, by the child's session id.
pub const CHILDREN_NAMESPACE: &str = "agent-host.children";
/// The child's bag: its link, under [`LINK_KEY`].
pub const LINK_NAMESPACE: &str = "agent-host.agent";
const LINK_KEY: &str = "link";
/// The child's bag: how many of its record's prompts its history holds (see
/// [`ChildRecord::prompts`]), written in the step that stores the prompt.
const PROMPTED_KEY: &str = "prompted";

/// A child as its parent keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildRecord {
    /// The order it was started in, from 1.
    pub number: u32,
    pub name: String,
    /// The plugin that started it.
    pub plugin: String,
    /// The tool call that started it.
    pub call_id: Option<String>,
    /// The tool call whose result is its final answer (`agents.wait`).
    pub waited_by: Option<String>,
    pub state: AgentState,
    pub answer: Option<String>,
    /// Prompts sent to it (its first, then each `send`): its history holds this many once
    /// the last has been stored.
    pub prompts: u32,
    /// The prompt its next turn starts with, while one is pending or running.
    pub next_prompt: Option<String>,
    /// The mode its first turn starts in, when its start named one.
    pub mode: Option<String>,
}

impl ChildRecord {
    pub fn status(&self, id: &str) -> AgentStatus {
        AgentStatus {
            id: id.to_owned(),
            name: self.name.clone(),
            state: self.state,
            answer: self.answer.clone(),
        }
    }
}

/// The children a bag records, in the order they were started.
pub fn children(bag: &StateBag) -> Vec<(String, ChildRecord)> {
    let mut children: Vec<(String, ChildRecord)> = bag
        .namespace(CHILDREN_NAMESPACE)
        .into_iter()
        .filter_map(|(id, text)| serde_json::from_str(&text).ok().map(|record| (id, record)))
        .collect();
    children.sort_by_key(|(_, record)| record.number);
    children
}

pub fn child(bag: &StateBag, id: &str) -> Option<ChildRecord> {
    serde_json::from_str(&bag.get(CHILDREN_NAMESPACE, id)?).ok()
}

pub fn put_child(bag: &StateBag, id: &str, record: &ChildRecord) {
    let text = serde_json::to_string(record).expect("a record is plain data");
    bag.put(CHILDREN_NAMESPACE, id, Some(text));
}

/// A child session's link to its parent, and what narrows every turn it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildLink {
    pub parent_id: String,
    pub call_id: Option<String>,
    pub name: String,
    /// 1 for a session's child, 2 for its grandchild.
    pub depth: u32,
    /// Its system prompt in place of the deployment's instructions.
    pub system_prompt: Option<String>,
    /// The only tools it is offered: its start's list, else every tool its parent had.
    pub tools: Vec<String>,
    pub model: Option<String>,
    /// The most model calls one of its turns may make.
    pub max_turns: Option<u32>,
}

impl ChildLink {
    /// The link `bag` holds: `Some` for a child agent's session.
    pub fn of(bag: &StateBag) -> Option<Self> {
        serde_json::from_str(&bag.get(LINK_NAMESPACE, LINK_KEY)?).ok()
    }

    pub fn put(&self, bag: &StateBag) {
        let text = serde_json::to_string(self).expect("a link is plain data");
        bag.put(LINK_NAMESPACE, LINK_KEY, Some(text));
    }
}

/// How many of its prompts a child's history holds.
pub fn prompted(bag: &StateBag) -> u32 {
    bag.get(LINK_NAMESPACE, PROMPTED_KEY).and_then(|text| text.parse().ok()).unwrap_or(0)
}

pub fn mark_prompted(bag: &StateBag, prompts: u32) {
    bag.put(LINK_NAMESPACE, PROMPTED_KEY, Some(prompts.to_string()));
}

/// The depth of the session `bag` belongs to: 0 unless it is a child.
pub fn depth(bag: &StateBag) -> u32 {
    ChildLink::of(bag).map_or(0, |link| link.depth)
}
