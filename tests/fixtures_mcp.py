"""Fixtures for the mcp tests."""
