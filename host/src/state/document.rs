//! A session as a document to carry elsewhere: `/export FILE` writes one, `--import FILE`
//! reads one into a new session. Versioned JSON: `{"format": "agent-host-session",
//! "version": 1, ...}` with the history (each reply with its usage), the summaries, the
//! compaction view, the model-call count and the state bag.
//!
//! Written the same way every time (fields in a fixed order, the state by namespace and key,
//! its values as the plugins wrote them), so exporting an imported session gives the very
//! bytes that were imported. A document from a newer version, or one that is not quite a
//! session document, is refused with the field that is wrong.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::store::{StoredSession, StoredView};
use crate::compacted_history::{CompactedHistory, Summaries};
use crate::conversation::{Message, Role};
use crate::events::TokenUsage;

/// The `format` every session document names.
pub const FORMAT: &str = "agent-host-session";
/// The newest document version this host reads and the one it writes.
pub const VERSION: u64 = 1;

/// Takes the host's own state out of an imported session, so a document cannot hand it
/// standing approvals nobody gave, an owner, or a fresh model budget; the namespaces taken
/// out, each once, in order. What the session's own model calls were estimated to cost stays:
/// it is the same record as the usage each reply carries in the history, which a document
/// brings along.
pub fn drop_host_state(session: &mut StoredSession) -> Vec<String> {
    let mut dropped: Vec<String> = Vec::new();
    session.state.retain(|(namespace, _, _)| {
        let host =
            namespace.starts_with(super::HOST_NAMESPACES) && namespace != super::ESTIMATED_USAGE_NAMESPACE;
        if host && !dropped.contains(namespace) {
            dropped.push(namespace.clone());
        }
        !host
    });
    dropped.sort();
    dropped
}

/// Why a text is not a session document this host can import.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("not a JSON document: {detail} (line {line}, column {column})")]
    Syntax { line: usize, column: usize, detail: String },
    #[error("field `{field}`: {detail}")]
    Field { field: String, detail: String },
    #[error(
        "the store holds state `{namespace}`/`{key}` that is not JSON, so it cannot be exported: {detail}"
    )]
    StateValue { namespace: String, key: String, detail: String },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    format: String,
    version: u64,
    model_calls: u64,
    history: Vec<Entry>,
    summaries: Vec<SummaryEntry>,
    view: Option<CompactedHistory>,
    /// namespace → key → value.
    state: BTreeMap<String, BTreeMap<String, Box<RawValue>>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    message: Message,
    /// On a reply: what its model call used, when the endpoint said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<TokenUsage>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryEntry {
    id: u64,
    message: Message,
}

/// Only what says which document this is, read before the rest.
#[derive(Deserialize)]
struct Header {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
}

/// The document for a stored session, pretty-printed, ending in a newline.
pub fn export(session: &StoredSession) -> Result<String, DocumentError> {
    let mut usage = session.reply_usage.iter().copied().peekable();
    let history = session
        .history
        .iter()
        .enumerate()
        .map(|(position, message)| Entry {
            message: message.clone(),
            usage: usage.next_if(|(at, _)| *at == position).map(|(_, used)| used),
        })
        .collect();
    let mut state: BTreeMap<String, BTreeMap<String, Box<RawValue>>> = BTreeMap::new();
    for (namespace, key, value) in &session.state {
        let raw = RawValue::from_string(value.clone()).map_err(|error| DocumentError::StateValue {
            namespace: namespace.clone(),
            key: key.clone(),
            detail: error.to_string(),
        })?;
        state.entry(namespace.clone()).or_default().insert(key.clone(), raw);
    }
    let document = Document {
        format: FORMAT.to_owned(),
        version: VERSION,
        model_calls: session.model_calls,
        history,
        summaries: session
            .summaries
            .iter()
            .map(|(id, message)| SummaryEntry { id: *id, message: message.clone() })
            .collect(),
        view: session.view.as_ref().map(|stored| stored.view.clone()),
        state,
    };
    let mut text = serde_json::to_string_pretty(&document).expect("a session document always serializes");
    text.push('\n');
    Ok(text)
}

/// The session a document holds, checked: its version one this host reads, every field
/// as this version defines it, the view naming only messages and summaries it has.
pub fn import(text: &str) -> Result<StoredSession, DocumentError> {
    let header: Header = serde_json::from_str(text).map_err(|error| read_error(error, None))?;
    // serde reads a struct from an array too; a document is an object.
    if !text.trim_start().starts_with('{') {
        return Err(field(WHOLE, "expected a JSON object"));
    }
    check_header(&header)?;
    let document: Document = serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(text))
        .map_err(|error| {
            let field = error.path().to_string();
            read_error(error.into_inner(), Some(field))
        })?;
    let mut summaries = Summaries::new();
    for (index, entry) in document.summaries.into_iter().enumerate() {
        if summaries.insert(entry.id, entry.message).is_some() {
            return Err(field(
                format!("summaries[{index}].id"),
                format!("summary {} appears twice", entry.id),
            ));
        }
    }
    if let Some(view) = &document.view {
        if view.covers > document.history.len() {
            let detail = format!(
                "the view covers {} messages, but the history has {}",
                view.covers,
                document.history.len()
            );
            return Err(field("view.covers", detail));
        }
        view.resolves(document.history.len(), &summaries)
            .map_err(|(index, error)| field(format!("view.entries[{index}]"), error.to_string()))?;
    }
    check_history(&document.history)?;
    check_nesting(&document.state)?;
    let mut reply_usage = Vec::new();
    let mut usage = TokenUsage::default();
    let mut history = Vec::with_capacity(document.history.len());
    for (position, entry) in document.history.into_iter().enumerate() {
        if let Some(used) = entry.usage {
            reply_usage.push((position, used));
            usage = usage.plus(used);
        }
        history.push(entry.message);
    }
    let state = document
        .state
        .into_iter()
        .flat_map(|(namespace, keys)| {
            keys.into_iter().map(move |(key, value)| (namespace.clone(), key, value.get().to_owned()))
        })
        .collect();
    Ok(StoredSession {
        history,
        state,
        model_calls: document.model_calls,
        usage,
        reply_usage,
        summaries,
        view: document.view.map(|view| StoredView { generation: 1, view }),
    })
}

/// How deep a state value may nest: serde_json's own limit when it parses a value, which
/// every plugin reading the value would hit.
const MAX_DEPTH: usize = 128;

/// A history the host could have written: no system message (the system prompt is the
/// deployment's, sent afresh each call), and each tool result answering a call made before
/// it and not answered yet.
fn check_history(history: &[Entry]) -> Result<(), DocumentError> {
    let mut open_calls: Vec<&str> = Vec::new();
    for (index, entry) in history.iter().enumerate() {
        let message = &entry.message;
        match message.role {
            Role::System => {
                return Err(field(
                    format!("history[{index}].message.role"),
                    "a session's history holds no `system` message: the system prompt is the \
                     deployment's, written afresh for every model call",
                ));
            }
            Role::Assistant => open_calls.extend(message.tool_calls.iter().map(|call| call.id.as_str())),
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                let Some(at) = open_calls.iter().position(|call| *call == id) else {
                    return Err(field(
                        format!("history[{index}].message.tool_call_id"),
                        format!(
                            "`{}` answers no tool call made before it and not answered yet",
                            crate::sanitize::one_line(id)
                        ),
                    ));
                };
                open_calls.remove(at);
            }
            Role::User => {}
        }
    }
    Ok(())
}

/// Refuses a state value nested deeper than [`MAX_DEPTH`], naming it.
fn check_nesting(state: &BTreeMap<String, BTreeMap<String, Box<RawValue>>>) -> Result<(), DocumentError> {
    for (namespace, keys) in state {
        for (key, value) in keys {
            let depth = nesting(value.get());
            if depth > MAX_DEPTH {
                return Err(field(
                    format!("state.{namespace}.{key}"),
                    format!("the value is nested {depth} deep; at most {MAX_DEPTH} levels are read"),
                ));
            }
        }
    }
    Ok(())
}

/// How deep the arrays and objects of `json` (valid JSON) nest.
fn nesting(json: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for byte in json.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn check_header(header: &Header) -> Result<(), DocumentError> {
    match &header.format {
        Some(serde_json::Value::String(format)) if format == FORMAT => {}
        Some(other) => return Err(field("format", format!("expected \"{FORMAT}\", found {other}"))),
        None => {
            return Err(field(
                "format",
                format!("missing: a session document says \"format\": \"{FORMAT}\""),
            ));
        }
    }
    match header.version.as_ref().map(|version| version.as_u64()) {
        Some(Some(VERSION)) => Ok(()),
        Some(Some(newer)) if newer > VERSION => Err(field(
            "version",
            format!(
                "the document is version {newer}, newer than this agent-host reads (up to {VERSION}); \
                 import it with a newer agent-host"
            ),
        )),
        Some(_) => Err(field("version", format!("expected a version number from 1 to {VERSION}"))),
        None => Err(field("version", "missing")),
    }
}

/// What an error about the document as a whole names as its field.
const WHOLE: &str = "(the document)";

fn field(name: impl Into<String>, detail: impl Into<String>) -> DocumentError {
    DocumentError::Field { field: name.into(), detail: detail.into() }
}

/// A serde_json error as a [`DocumentError`]: a syntax error with where it is, any other
/// with the field it is about (`None`: the document as a whole).
fn read_error(error: serde_json::Error, path: Option<String>) -> DocumentError {
    use serde_json::error::Category;
    match error.classify() {
        Category::Syntax | Category::Eof | Category::Io => {
            let detail = error.to_string();
            let detail = detail.rsplit_once(" at line ").map_or(detail.as_str(), |(what, _)| what).to_owned();
            DocumentError::Syntax { line: error.line(), column: error.column(), detail }
        }
        Category::Data => {
            let field = path.filter(|path| path != ".").unwrap_or_else(|| WHOLE.to_owned());
            DocumentError::Field { field, detail: error.to_string() }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compacted_history::MessageId;
    use crate::tools::ToolCall;

    fn session() -> StoredSession {
        let call =
            ToolCall { id: "c1".into(), name: "notes_add".into(), arguments: "{\"text\":\"x\"}".into() };
        let used =
            TokenUsage { input_tokens: 120, output_tokens: 8, cache_read_tokens: 100, cache_write_tokens: 0 };
        StoredSession {
            history: vec![
                Message::user("go"),
                Message::assistant("", vec![call]),
                Message::tool("c1", "added"),
                Message::assistant("done", vec![]),
                Message::user("again"),
            ],
            state: vec![
                ("notes".into(), "items".into(), r#"["x", {"nested": true}]"#.into()),
                ("planner".into(), "list".into(), "[]".into()),
            ],
            model_calls: 2,
            usage: used.plus(used),
            reply_usage: vec![(1, used), (3, used)],
            summaries: Summaries::from([(1, Message::system("the notes plugin added x"))]),
            view: Some(StoredView {
                generation: 1,
                view: CompactedHistory {
                    covers: 4,
                    entries: vec![MessageId::Message(0), MessageId::Summary(1)],
                },
            }),
        }
    }

    #[test]
    fn export_then_import_gives_the_session_back_and_the_same_bytes_again() {
        let original = session();
        let text = export(&original).unwrap();
        let imported = import(&text).unwrap();
        assert_eq!(imported, original);
        assert_eq!(export(&imported).unwrap(), text);
        assert!(text.starts_with("{\n  \"format\": \"agent-host-session\",\n  \"version\": 1,\n"), "{text}");
        assert!(text.contains(r#""items": ["x", {"nested": true}]"#), "state values as written: {text}");
    }

    fn refused(text: &str) -> String {
        import(text).unwrap_err().to_string()
    }

    fn with(change: impl FnOnce(&mut serde_json::Value)) -> String {
        let mut document: serde_json::Value = serde_json::from_str(&export(&session()).unwrap()).unwrap();
        change(&mut document);
        document.to_string()
    }

    #[test]
    fn a_newer_version_or_another_format_is_refused_naming_the_field() {
        let newer = refused(&with(|document| document["version"] = 2.into()));
        assert!(newer.starts_with("field `version`: the document is version 2, newer than"), "{newer}");
        assert!(refused(&with(|document| document["version"] = "1".into())).starts_with("field `version`"));
        let other = refused(&with(|document| document["format"] = "chat-log".into()));
        assert_eq!(other, "field `format`: expected \"agent-host-session\", found \"chat-log\"");
        let missing = refused(r#"{"version": 1}"#);
        assert!(missing.starts_with("field `format`: missing"), "{missing}");
    }

    #[test]
    fn a_malformed_document_is_refused_naming_the_field_or_where_the_syntax_breaks() {
        let role = refused(&with(|document| document["history"][2]["message"]["role"] = "robot".into()));
        assert!(role.starts_with("field `history[2].message.role`: unknown variant `robot`"), "{role}");
        let unknown = refused(&with(|document| document["extra"] = true.into()));
        assert!(unknown.starts_with("field `extra`: unknown field `extra`, expected one of"), "{unknown}");
        let no_history = refused(&with(|document| {
            document.as_object_mut().unwrap().remove("history");
        }));
        assert!(no_history.contains("missing field `history`"), "{no_history}");
        let usage = refused(&with(|document| document["history"][1]["usage"]["input_tokens"] = (-1).into()));
        assert!(usage.starts_with("field `history[1].usage.input_tokens`"), "{usage}");
        let syntax = import("{\n  \"format\": \"agent-host-session\",\n  \"version\": 1,,\n}").unwrap_err();
        assert!(matches!(&syntax, DocumentError::Syntax { line: 3, column: 16, .. }), "{syntax:?}: {syntax}");
        assert_eq!(
            import("[1, 2]").unwrap_err().to_string(),
            "field `(the document)`: expected a JSON object"
        );
        let string = import("\"text\"").unwrap_err().to_string();
        assert!(string.starts_with("field `(the document)`: invalid type: string"), "{string}");
    }

    #[test]
    fn a_view_naming_what_the_document_lacks_is_refused_with_its_entry() {
        let unknown =
            refused(&with(|document| document["view"]["entries"][1] = serde_json::json!({"summary": 7})));
        assert_eq!(
            unknown,
            "field `view.entries[1]`: it names summary #7, which is not among the messages it replaces"
        );
        let covers = refused(&with(|document| document["view"]["covers"] = 9.into()));
        assert_eq!(covers, "field `view.covers`: the view covers 9 messages, but the history has 5");
        let twice = refused(&with(
            |document| document["summaries"] = serde_json::json!([{"id": 1, "message": {"role": "system"}}, {"id": 1, "message": {"role": "system"}}]),
        ));
        assert_eq!(twice, "field `summaries[1].id`: summary 1 appears twice");
    }

    #[test]
    fn the_hosts_own_state_is_taken_out_and_named_and_plugins_state_is_kept() {
        let mut imported = session();
        imported.state.push(("agent-host.approvals".into(), "scoped".into(), r#"{"granted":[]}"#.into()));
        imported.state.push(("agent-host.serve".into(), "owner".into(), r#""alice""#.into()));
        imported.state.push(("agent-host.approvals".into(), "other".into(), "1".into()));
        let dropped = drop_host_state(&mut imported);
        assert_eq!(dropped, ["agent-host.approvals", "agent-host.serve"]);
        assert_eq!(imported.state, session().state);

        let estimated =
            ("agent-host.estimated-usage".to_owned(), "model".to_owned(), r#"{"calls":1}"#.to_owned());
        imported.state.push(estimated.clone());
        assert!(drop_host_state(&mut imported).is_empty(), "kept, as the replies' own usage is");
        assert_eq!(imported.state.last(), Some(&estimated));
    }

    #[test]
    fn a_tool_result_with_no_call_before_it_is_refused_naming_it() {
        let orphan =
            refused(&with(|document| document["history"][2]["message"]["tool_call_id"] = "c9".into()));
        assert!(orphan.starts_with("field `history[2].message.tool_call_id`: `c9`"), "{orphan}");
        let early = refused(&with(|document| {
            let history = document["history"].as_array_mut().unwrap();
            history.swap(1, 2);
        }));
        assert!(early.starts_with("field `history[1].message.tool_call_id`"), "{early}");
    }

    #[test]
    fn a_system_message_in_the_history_is_refused_naming_it() {
        let system = refused(&with(|document| document["history"][4]["message"]["role"] = "system".into()));
        assert!(system.starts_with("field `history[4].message.role`: "), "{system}");
        assert!(system.contains("system"), "{system}");
    }

    #[test]
    fn deep_nesting_is_refused_naming_where() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let text = with(|document| {
            document["state"]["notes"]["items"] = serde_json::Value::Null;
        })
        .replace("\"items\":null", &format!("\"items\":{deep}"));
        let refused = refused(&text);
        assert!(refused.contains("state.notes.items"), "{refused}");
        assert!(refused.contains("nested"), "{refused}");
    }
}
