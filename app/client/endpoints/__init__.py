"""Every `/v1` endpoint, written once as a function returning a `Call` (see `app.client.call`)."""
