"""Every `/v1` endpoint, written once as a function returning a `Call` (see `beacon_client.call`)."""
