"""The notifiers page: target, last delivery outcome, recent deliveries; the test button sends a real test."""

from __future__ import annotations

import html
import re

import pytest

from tests.integration.ui.conftest import csrf_of, sign_in


@pytest.fixture
def receiver(httpserver):
    return httpserver


async def _notifier(client, auth, name, url):
    r = await client.post("/v1/notifiers", headers=auth, json={"name": name, "type": "webhook", "config": {"url": url}})
    assert r.status_code == 201, r.text
    return r.json()


async def test_notifiers_show_target_and_deliveries(app_client, admin_token, receiver):

    auth = {"Authorization": f"Bearer {admin_token}"}
    receiver.expect_request("/ok").respond_with_data("fine", status=200)
    receiver.expect_request("/broken").respond_with_data("no", status=400)
    async with app_client(allow_private_destinations=True) as client:
        good = await _notifier(client, auth, "ops hook", receiver.url_for("/ok"))
        bad = await _notifier(client, auth, "broken hook", receiver.url_for("/broken"))
        assert (await client.post(f"/v1/notifiers/{good['id']}/test", headers=auth)).status_code == 201
        await sign_in(client, admin_token)
        page = (await client.get("/ui/notifiers")).text
        assert f'id="{good["id"]}"' in page and f'id="{bad["id"]}"' in page
        assert f"<code>{html.escape(good['target'])}</code>" in page
        good_card = page.split(f'id="{good["id"]}"')[1].split("</section>")[0]
        assert '<span class="badge status-succeeded">succeeded</span>' in good_card
        bad_card = page.split(f'id="{bad["id"]}"')[1].split("</section>")[0]
        assert "none yet" in bad_card

        # The test button: a POST with the form token, answered with a redirect to the outcome.
        r = await client.post(f"/ui/notifiers/{bad['id']}/test", data={"csrf": "forged"}, follow_redirects=False)
        assert r.status_code == 403
        r = await client.post(f"/ui/notifiers/{bad['id']}/test", data={"csrf": csrf_of(page)}, follow_redirects=False)
        assert r.status_code == 303
        assert re.fullmatch(rf"/ui/notifiers\?tested=dlv_[0-9a-f]+#{bad['id']}", r.headers["location"])
        page = (await client.get(r.headers["location"])).text
        result = page.split('id="test-result"')[1].split("</div>")[0]
        assert '<span class="badge status-failed">failed</span>' in result and "HTTP 400" in result
        bad_card = page.split(f'id="{bad["id"]}"')[1].split("</section>")[0]
        assert '<span class="badge status-failed">failed</span>' in bad_card
        listed = (await client.get(f"/v1/notifiers/{bad['id']}/deliveries", headers=auth)).json()["data"]
        assert len(listed) == 1 and listed[0]["error"] and listed[0]["error"] in html.unescape(bad_card)
    assert [entry[0].path for entry in receiver.log] == ["/ok", "/broken"]  # the redirect did not send again


async def test_the_test_button_needs_notifiers_write(client, make_token, admin_token):
    auth = {"Authorization": f"Bearer {admin_token}"}
    r = await client.post(
        "/v1/notifiers", headers=auth, json={"name": "n", "type": "incident_a", "config": {"integration_key": "k" * 32}}
    )
    assert r.status_code == 201, r.text
    await sign_in(client, await make_token(["notifiers:read"]))
    page = (await client.get("/ui/notifiers")).text
    assert "Send a test" not in page and "no <code>notifiers:write</code> scope" in page
    r = await client.post(f"/ui/notifiers/{r.json()['id']}/test", data={"csrf": csrf_of(page)}, follow_redirects=False)
    assert r.status_code == 403 and "notifiers:write" in r.text


async def test_testing_an_unknown_notifier_is_a_clear_404(client, admin_token):
    await sign_in(client, admin_token)
    page = (await client.get("/ui/notifiers")).text
    assert "No notifiers yet" in page
    r = await client.post("/ui/notifiers/ntf_nope/test", data={"csrf": csrf_of(page)}, follow_redirects=False)
    assert r.status_code == 404 and "No notifier with id" in r.text


async def test_the_page_shows_and_switches_send_resolved(client, auth, admin_token):
    body = {"name": "slack", "type": "chat_a", "config": {"url": "https://hooks.slack.test/services/T/B/x"}}
    r = await client.post("/v1/notifiers", headers=auth, json=body)
    assert r.status_code == 201 and r.json()["send_resolved"] is False, r.text  # Alertmanager's default for Slack
    await sign_in(client, admin_token)
    page = (await client.get("/ui/notifiers")).text
    assert "Resolved alerts</span>\n    not sent" in page and "Send them" in page
    notifier_id = r.json()["id"]
    form = {"csrf": csrf_of(page), "value": "on"}
    r = await client.post(f"/ui/notifiers/{notifier_id}/send-resolved", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    assert (await client.get(f"/v1/notifiers/{notifier_id}", headers=auth)).json()["send_resolved"] is True
    assert "Stop sending them" in (await client.get("/ui/notifiers")).text


async def test_a_token_limited_to_datasets_changes_no_notifier_from_the_console(client, auth, make_token):
    # Notifiers are shared configuration (app/access.py): as on the API, a dataset-limited token with
    # `notifiers:write` neither sends a test nor switches `send_resolved`, even posting the forms itself.
    body = {"name": "slack", "type": "chat_a", "config": {"url": "https://hooks.slack.test/services/T/B/x"}}
    r = await client.post("/v1/notifiers", headers=auth, json=body)
    assert r.status_code == 201, r.text
    notifier_id = r.json()["id"]
    await sign_in(client, await make_token(["notifiers:read", "notifiers:write"], datasets=["web"]))
    page = (await client.get("/ui/notifiers")).text
    assert "Send them" not in page and "Send a test" not in page
    for action, form in (("send-resolved", {"value": "on"}), ("test", {})):
        r = await client.post(
            f"/ui/notifiers/{notifier_id}/{action}", data={"csrf": csrf_of(page), **form}, follow_redirects=False
        )
        assert r.status_code == 403 and "limited to datasets cannot change notifiers" in r.text, (action, r.text)
    notifier = (await client.get(f"/v1/notifiers/{notifier_id}", headers=auth)).json()
    assert notifier["send_resolved"] is False
    r = await client.get("/v1/deliveries", headers=auth, params={"notifier_id": notifier_id})
    assert r.json()["data"] == []
