"""Routing: alerts with labels, the routing tree, grouping with three timers, silences, time intervals and
inhibition (see the contract in docs/design/routing.md). Nothing here imports app/monitors: monitors feed
alerts in through `app.routing.store` (app/monitors/alerting.py)."""
