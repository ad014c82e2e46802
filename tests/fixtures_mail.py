"""Fixtures for the mail tests."""
