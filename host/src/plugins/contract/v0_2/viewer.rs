//! The `viewer` exports (since 0.2.4): `view`'s widgets converted to the host's
//! ([`crate::events::Widget`]); `shows` needs no conversion.

use wasmtime::Store;
use wasmtime::component::Func;

use super::exports::agent_host::plugin::viewer as wit;
use super::host;
use crate::events::{ChecklistEntry, ChoiceOption, EntryState, Widget};
use crate::runtime::CallState;

pub(in crate::plugins::contract) async fn view(
    store: &mut Store<CallState>,
    func: Func,
    ctx: &host::CallContext,
    config: &str,
) -> wasmtime::Result<Vec<Widget>> {
    let ctx = super::call_context(ctx, config);
    let widgets = super::super::call::<_, Vec<wit::Widget>>(store, func, (&ctx,)).await?;
    Ok(widgets.into_iter().map(widget).collect())
}

fn widget(widget: wit::Widget) -> Widget {
    match widget {
        wit::Widget::Checklist(list) => Widget::Checklist {
            id: list.id,
            label: list.label,
            entries: list.entries.into_iter().map(entry).collect(),
        },
        wit::Widget::Choice(choice) => Widget::Choice {
            id: choice.id,
            label: choice.label,
            current: choice.current,
            options: choice
                .options
                .into_iter()
                .map(|option| ChoiceOption {
                    value: option.value,
                    label: option.label,
                    description: option.description,
                })
                .collect(),
            command: choice.command,
            category: choice.category,
        },
        wit::Widget::Text(text) => Widget::Text { id: text.id, label: text.label, markdown: text.markdown },
    }
}

fn entry(entry: wit::ChecklistEntry) -> ChecklistEntry {
    ChecklistEntry {
        title: entry.title,
        state: match entry.state {
            wit::EntryState::Pending => EntryState::Pending,
            wit::EntryState::InProgress => EntryState::InProgress,
            wit::EntryState::Completed => EntryState::Completed,
        },
        active_form: entry.active_form,
        detail: entry.detail,
    }
}
