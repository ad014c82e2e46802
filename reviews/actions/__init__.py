"""Every write of a version's life, one module per kind of change (STYLE.md: Zulip's
actions). Each action validates through the policy, makes one change, audits in the same
transaction and notifies after commit; doors call the module that does what they ask."""
