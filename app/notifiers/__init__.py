"""Notifiers: destinations (chat, paging, webhook, e-mail) that monitors route to; the types are adapters/."""
