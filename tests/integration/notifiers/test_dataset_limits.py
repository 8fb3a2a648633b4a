"""Notifiers are shared configuration (app/access.py): a token limited to datasets reads their names and targets,
and changes none of them — through every write of the API and the console. Otherwise a token limited to `a`
could redirect, mute, rotate, delete or page the notifier dataset `b`'s monitors send through."""

from __future__ import annotations

from tests.helpers import assert_error
from tests.integration.ui.conftest import csrf_of, sign_in

HOOK = {"name": "b-pager", "type": "webhook", "config": {"url": "https://hooks.example.org/b"}}


async def _limited(make_token, scopes=("*",)) -> dict[str, str]:
    return {"Authorization": f"Bearer {await make_token(list(scopes), datasets=['a'])}"}


async def test_a_limited_token_changes_no_notifier(client, auth, make_token):
    created = await client.post("/v1/notifiers", headers=auth, json=HOOK)
    assert created.status_code == 201, created.text
    before = created.json()
    before.pop("signing_secret")
    base = f"/v1/notifiers/{before['id']}"
    for scopes in (["*"], ["notifiers:read", "notifiers:write"]):
        limited = await _limited(make_token, scopes)
        for method, path, body in (
            ("POST", "/v1/notifiers", {**HOOK, "name": "mine"}),
            ("PATCH", base, {"config": {"url": "https://attacker.example.net/steal"}}),
            ("PATCH", base, {"disabled_until": "2199-01-01T00:00:00Z"}),
            ("PATCH", base, {"name": "renamed"}),
            ("POST", f"{base}/rotate-secret", None),
            ("POST", f"{base}/test", None),
            ("DELETE", base, None),
        ):
            r = await client.request(method, path, headers=limited, json=body)
            err = assert_error(r, 403, "insufficient_scope")
            assert "limited to datasets" in err["message"] and "notifiers" in err["message"], (method, path, err)
            assert "signing_secret" not in r.text and "whsec_" not in r.text
        # Reading stays: the names and targets a monitor routes to.
        assert (await client.get(base, headers=limited)).json() == before
        listed = (await client.get("/v1/notifiers", headers=limited)).json()["data"]
        assert [n["name"] for n in listed] == ["b-pager"]
    assert (await client.get(base, headers=auth)).json() == before
    deliveries = (await client.get(f"{base}/deliveries", headers=auth)).json()["data"]
    assert deliveries == []  # no test message was sent


async def test_the_console_offers_and_sends_no_test_message_for_a_limited_token(client, auth, make_token):
    created = (await client.post("/v1/notifiers", headers=auth, json=HOOK)).json()
    await sign_in(client, await make_token(["*"], datasets=["a"]))
    page = await client.get("/ui/notifiers")
    assert page.status_code == 200 and "b-pager" in page.text
    assert f"/ui/notifiers/{created['id']}/test" not in page.text
    r = await client.post(
        f"/ui/notifiers/{created['id']}/test", data={"csrf": csrf_of(page.text)}, follow_redirects=False
    )
    assert r.status_code == 403, r.text
    deliveries = (await client.get(f"/v1/notifiers/{created['id']}/deliveries", headers=auth)).json()["data"]
    assert deliveries == []
