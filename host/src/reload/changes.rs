//! Which of the file system's events are changes: what a person's save, copy, move or delete
//! makes, as opposed to what reading a file makes.
//!
//! Linux's inotify reports every open and every close, a read's included, and a reload's
//! own build reads the plugin's files, so reloading on any event reloads forever: each
//! reload's reads are the next one's cause.

use notify::event::{AccessKind, AccessMode, MetadataKind, ModifyKind};
use notify::{Event, EventKind};

/// Whether `event` may have changed what a file holds (or says about itself): a create, a
/// write, a rename, a removal, a change of mode or owner; or the watcher lost events and
/// everything must be looked at again. An open, a read, a close after reading and an
/// access-time update are not.
pub(super) fn may_change(event: &Event) -> bool {
    if event.need_rescan() {
        return true;
    }
    match event.kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        EventKind::Modify(_) => true,
        // A file opened for writing was closed: a save's last step.
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Any | EventKind::Other => false,
    }
}

#[cfg(test)]
mod tests {
    use notify::event::{CreateKind, DataChange, Flag, ModifyKind, RemoveKind, RenameMode};

    use super::*;

    fn event(kind: EventKind) -> Event {
        Event::new(kind).add_path("/deployment/config.toml".into())
    }

    #[test]
    fn saves_moves_and_deletes_are_changes() {
        for kind in [
            EventKind::Create(CreateKind::File),
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::Permissions)),
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            EventKind::Remove(RemoveKind::File),
        ] {
            assert!(may_change(&event(kind)), "{kind:?}");
        }
    }

    #[test]
    fn opening_reading_and_closing_after_a_read_are_not() {
        for kind in [
            EventKind::Access(AccessKind::Open(AccessMode::Any)),
            EventKind::Access(AccessKind::Read),
            EventKind::Access(AccessKind::Close(AccessMode::Read)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)),
            EventKind::Other,
        ] {
            assert!(!may_change(&event(kind)), "{kind:?}");
        }
    }

    #[test]
    fn lost_events_mean_looking_again() {
        assert!(may_change(&Event::new(EventKind::Other).set_flag(Flag::Rescan)));
    }
}
