"""Fixtures for the web tests."""
