"""Beacon: a log-event store and alert router."""
