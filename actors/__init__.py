"""The actor runtime: bounded mailboxes, one actor per session, one writer per workspace, the Runtime."""
