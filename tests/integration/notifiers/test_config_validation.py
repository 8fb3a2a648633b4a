"""Per-type config validation through the API: required keys, URL and e-mail syntax, unknown keys, with `param`."""

from __future__ import annotations

from tests.helpers import assert_error

URL_TYPES = ["chat_a", "chat_b", "chat_c", "webhook"]
GOOD_URL = "https://hooks.example.com/services/abc"

CASES: list[tuple[str, object, str, str]] = []
for t in URL_TYPES:
    CASES += [
        (t, {}, "missing_field", "config.url"),
        (t, {"url": "ftp://hooks.example.com/x"}, "invalid_field", "config.url"),
        (t, {"url": "mailto:ops@example.com"}, "invalid_field", "config.url"),
        (t, {"url": "hooks.example.com/x"}, "invalid_field", "config.url"),
        (t, {"url": "https://"}, "invalid_field", "config.url"),
        (t, {"url": "https://hooks.example.com:99999/x"}, "invalid_field", "config.url"),
        (t, {"url": "https://hooks.example.com/a b"}, "invalid_field", "config.url"),
        (t, {"url": "https://hooks.example.com/" + "a" * 2048}, "invalid_field", "config.url"),
        (t, {"url": 42}, "invalid_field", "config.url"),
        (t, {"url": GOOD_URL, "integration_key": "k"}, "invalid_field", "config.integration_key"),
        (t, {"url": GOOD_URL, "addresses": ["a@example.com"]}, "invalid_field", "config.addresses"),
        (t, {"url": GOOD_URL, "channel": "#ops"}, "invalid_field", "config.channel"),
    ]
for t in ["incident_a", "incident_b"]:
    CASES += [
        (t, {}, "missing_field", "config.integration_key"),
        (t, {"integration_key": ""}, "invalid_field", "config.integration_key"),
        (t, {"integration_key": "has space"}, "invalid_field", "config.integration_key"),
        (t, {"integration_key": 1234}, "invalid_field", "config.integration_key"),
        (t, {"integration_key": "k" * 257}, "invalid_field", "config.integration_key"),
        (t, {"integration_key": "abcd", "url": GOOD_URL}, "invalid_field", "config.url"),
        (t, {"integration_key": "abcd", "severity": "critical"}, "invalid_field", "config.severity"),
    ]
CASES += [
    ("email", {}, "missing_field", "config.addresses"),
    ("email", {"addresses": []}, "invalid_field", "config.addresses"),
    ("email", {"addresses": "ops@example.com"}, "invalid_field", "config.addresses"),
    ("email", {"addresses": ["ops@example.com", "not-an-address"]}, "invalid_field", "config.addresses"),
    ("email", {"addresses": ["ops@"]}, "invalid_field", "config.addresses"),
    ("email", {"addresses": ["@example.com"]}, "invalid_field", "config.addresses"),
    ("email", {"addresses": ["two@@example.com"]}, "invalid_field", "config.addresses"),
    ("email", {"addresses": [7]}, "invalid_field", "config.addresses"),
    ("email", {"addresses": [f"u{i}@example.com" for i in range(51)]}, "invalid_field", "config.addresses"),
    ("email", {"addresses": ["ops@example.com"], "url": GOOD_URL}, "invalid_field", "config.url"),
    ("webhook", {"url": GOOD_URL, "signing_secret": "plain-text"}, "invalid_field", "config.signing_secret"),
    ("webhook", {"url": GOOD_URL, "signing_secret": "whsec_not!base64"}, "invalid_field", "config.signing_secret"),
    ("webhook", {"url": GOOD_URL, "signing_secret": "whsec_QUJD"}, "invalid_field", "config.signing_secret"),
]


async def test_config_rejected_with_param(client, auth, db):
    # One database for all the cases (they store nothing); each failure names its case.
    from sqlalchemy import text

    for type_, config, code, param in CASES:
        r = await client.post("/v1/notifiers", headers=auth, json={"name": "n", "type": type_, "config": config})
        try:
            err = assert_error(r, 400, code, param=param)
        except AssertionError as exc:
            raise AssertionError(f"case {type_} {config!r}: {exc}") from None
        assert param in err["message"], (type_, config, err)
    async with db() as s:
        assert (await s.execute(text("SELECT count(*) FROM notifiers"))).scalar_one() == 0


async def test_fifty_addresses_and_http_urls_are_fine(client, auth):
    r = await client.post(
        "/v1/notifiers",
        headers=auth,
        json={"name": "n", "type": "email", "config": {"addresses": [f"u{i}@example.com" for i in range(50)]}},
    )
    assert r.status_code == 201 and r.json()["target"] == "u0@example.com +49 more"
    r = await client.post(
        "/v1/notifiers",
        headers=auth,
        json={"name": "n2", "type": "chat_b", "config": {"url": "http://public.example/x"}},
    )
    assert r.status_code == 201
