"""Deploy tools post their markers to Beacon unchanged: Grafana's annotations API, Honeycomb's markers API and
PagerDuty's change events, each answered as the real service answers (docs/deploy-markers.md)."""
