"""What every app shares and nothing more: domain errors, the audit trail, the acting parties.

The bottom layer: it imports no other Quire app (import-linter holds that in CI).
"""
