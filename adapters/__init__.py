"""Notifier adapters: one module per destination type."""
