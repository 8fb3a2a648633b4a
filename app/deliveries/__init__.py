"""Deliveries: the outbox of messages to notifiers, the worker that sends them, and their log."""
