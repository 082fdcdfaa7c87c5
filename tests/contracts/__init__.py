"""Conformance suites: one per interface, run against every implementation of it."""
