"""The alerts, silences and routing pages against the real app: what they show of the routing state, the
silence made from an alert, the forms' errors, and who may see and change what."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.helpers import assert_error
from tests.integration.ui.conftest import csrf_of, sign_in


def section(page: str, marker: str, end: str = "</section>") -> str:
    assert marker in page, f"{marker!r} not on the page"
    return page.split(marker, 1)[1].split(end, 1)[0]


def row_of(page: str, element_id: str) -> str:
    return section(page, f'id="{element_id}"', "</tr>")


async def put_routing(client: Any, auth: dict[str, str], doc: dict[str, Any]) -> dict[str, Any]:
    current = (await client.get("/v1/routing", headers=auth)).json()
    r = await client.put("/v1/routing", headers={**auth, "If-Match": current["version"]}, json=doc)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def post_alerts(client: Any, auth: dict[str, str], *alerts: dict[str, Any]) -> list[str]:
    r = await client.post("/v1/alerts", headers=auth, json=list(alerts))
    assert r.status_code == 200, r.text
    return list(r.json()["fingerprints"])


async def notifier(client: Any, auth: dict[str, str], name: str) -> str:
    body = {"name": name, "type": "webhook", "config": {"url": "https://hooks.example/" + name}}
    r = await client.post("/v1/notifiers", headers=auth, json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def monitor_alert(client: Any, auth: dict[str, str], dataset: str, name: str) -> str:
    """A monitor over `dataset` that fires on its first evaluation; returns its id."""
    now = datetime.now(UTC)
    events = [{"_time": (now - timedelta(seconds=s)).isoformat(), "status": 500} for s in range(1, 6)]
    assert (await client.post(f"/v1/ingest/{dataset}", headers=auth, json=events)).status_code == 200
    body = {
        "name": name,
        "type": "threshold",
        "apl": f"['{dataset}'] | where status >= 500 | summarize count()",
        "operator": "above",
        "threshold": 1,
        "interval_seconds": 60,
        "range_seconds": 300,
        "labels": {"team": "storage"},
        "notifier_ids": [],
    }
    r = await client.post("/v1/monitors", headers=auth, json=body)
    assert r.status_code == 201, r.text
    assert (await client.post(f"/v1/monitors/{r.json()['id']}/evaluate", headers=auth, json={})).status_code == 200
    return str(r.json()["id"])


async def test_alerts_page_shows_groups_and_why_each_alert_is_suppressed(client, auth, admin_token):
    pager, chat = await notifier(client, auth, "pager"), await notifier(client, auth, "chat")
    await put_routing(
        client,
        auth,
        {
            "route": {
                "notifier_ids": [chat],
                "group_by": ["cluster"],
                "routes": [{"matchers": ["severity=page"], "notifier_ids": [pager], "mute_time_intervals": ["always"]}],
            },
            "inhibit_rules": [
                {
                    "source_matchers": ["alertname=DBDown"],
                    "target_matchers": ["alertname=Latency"],
                    "equal": ["cluster"],
                }
            ],
            "time_intervals": [{"name": "always", "intervals": [{}]}],
        },
    )
    db_down, latency, disk, paged = await post_alerts(
        client,
        auth,
        {"labels": {"alertname": "DBDown", "cluster": "eu"}, "annotations": {"summary": "primary unreachable"}},
        {"labels": {"alertname": "Latency", "cluster": "eu"}},
        {"labels": {"alertname": "DiskFull", "cluster": "us", "instance": "db-1"}},
        {"labels": {"alertname": "Pager", "cluster": "us", "severity": "page"}},
    )
    until = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    r = await client.post(
        "/v1/silences", headers=auth, json={"matchers": ["instance=db-1"], "ends_at": until, "comment": "disk swap"}
    )
    silence_id = r.json()["id"]

    await sign_in(client, admin_token)
    r = await client.get("/ui/alerts")
    assert r.status_code == 200
    page = r.text
    assert "1 firing · 3 suppressed" in html.unescape(page)
    eu = section(page, 'data-group-key="{}:{cluster=&#34;eu&#34;}"')
    assert ">chat</span>" in eu  # the notifier by its name
    assert 'id="alert-' + db_down + '"' in eu and 'id="alert-' + latency + '"' in eu
    assert "firing" in row_of(page, f"alert-{db_down}") and "primary unreachable" in row_of(page, f"alert-{db_down}")
    inhibited = row_of(page, f"alert-{latency}")
    assert ">suppressed<" in inhibited and f'href="#alert-{db_down}"' in inhibited  # inhibited by DBDown
    silenced = row_of(page, f"alert-{disk}")
    assert ">suppressed<" in silenced and f'href="/ui/silences#{silence_id}"' in silenced
    muted = row_of(page, f"alert-{paged}")
    assert "muted by always" in muted
    paged_group = section(page, 'data-group-key="{}/{severity=&#34;page&#34;}:{cluster=&#34;us&#34;}"')
    assert ">pager</span>" in paged_group and "route muted now by always" in paged_group
    # Every firing or suppressed alert can be silenced from here.
    assert f'href="/ui/silences/new?alert={disk}"' in silenced

    # Filters: matchers one per line, and a state.
    page = (await client.get("/ui/alerts", params={"matchers": 'cluster="eu"\n\nalertname=~"DB.*"'})).text
    assert f"alert-{db_down}" in page and f"alert-{latency}" not in page and f"alert-{disk}" not in page
    assert "cluster=&#34;eu&#34;\nalertname=~&#34;DB.*&#34;</textarea>" in page  # kept as typed, blank line dropped
    page = (await client.get("/ui/alerts", params={"state": "firing"})).text
    assert f"alert-{db_down}" in page and f"alert-{latency}" not in page
    # The inhibiting alert is named even when the filter leaves it off the page.
    page = (await client.get("/ui/alerts", params={"state": "suppressed"})).text
    assert f'id="alert-{db_down}"' not in page
    link = f'<a href="/ui/alerts#alert-{db_down}" title="{db_down}">DBDown</a>'  # where it is listed
    assert link in row_of(page, f"alert-{latency}")
    r = await client.get("/ui/alerts", params={"matchers": 'team=~"(unclosed"'})
    assert r.status_code == 400
    assert "Invalid matcher" in section(r.text, 'id="filter-error"', "</p>")
    assert "Fix the filter" in r.text and "(unclosed" in r.text  # the page stands, the typed filter kept
    r = await client.get("/ui/alerts", params={"state": "sleeping"})
    assert r.status_code == 400 and 'id="filter-error"' in r.text


async def test_silence_from_an_alert_then_extend_and_expire(client, auth, admin_token):
    (fp,) = await post_alerts(client, auth, {"labels": {"alertname": "DiskFull", "instance": 'db "1"'}})
    await sign_in(client, admin_token)
    form = (await client.get("/ui/silences/new", params={"alert": fp})).text
    assert 'id="from-alert"' in form
    typed = html.unescape(section(form, 'name="matchers"', "</textarea>").split(">", 1)[1])
    assert typed == 'alertname="DiskFull"\ninstance="db \\"1\\""'  # every label, quoted and escaped

    csrf = csrf_of(form)
    fields = {"csrf": csrf, "matchers": typed, "duration": "90m", "comment": "swap the disk", "created_by": "ana"}
    r = await client.post("/ui/silences", data={**fields, "csrf": "forged"}, follow_redirects=False)
    assert r.status_code == 403
    r = await client.post("/ui/silences", data=fields, follow_redirects=False)
    assert r.status_code == 303
    found = re.fullmatch(r"/ui/silences\?state=active&changed=(sil_[0-9a-f]+)#\1", r.headers["location"])
    assert found, r.headers["location"]
    silence_id = found.group(1)
    silence = (await client.get(f"/v1/silences/{silence_id}", headers=auth)).json()
    assert silence["matchers"] == ['alertname="DiskFull"', 'instance="db \\"1\\""']
    assert (silence["comment"], silence["created_by"], silence["state"]) == ("swap the disk", "ana", "active")
    length = datetime.fromisoformat(silence["ends_at"]) - datetime.fromisoformat(silence["starts_at"])
    assert length == timedelta(minutes=90)
    page = (await client.get(r.headers["location"])).text
    listed = row_of(page, silence_id)
    assert "changed" in page.split(f'id="{silence_id}"')[0].rsplit("<tr", 1)[1]  # the new one is highlighted
    assert "swap the disk" in listed and "by ana" in listed
    # What it holds back now: a link to those alerts.
    assert re.search(
        r'<a href="/ui/alerts\?state=suppressed&amp;matchers=alertname%3D%22DiskFull%22%0A[^"]+">1 alert</a>', listed
    )
    alert = (await client.get(f"/v1/alerts/{fp}", headers=auth)).json()
    assert alert["state"] == "suppressed" and alert["silenced_by"] == [silence_id]

    r = await client.post(f"/ui/silences/{silence_id}/extend", data={"csrf": csrf, "duration": "1h"})
    assert r.status_code == 200
    extended = (await client.get(f"/v1/silences/{silence_id}", headers=auth)).json()
    assert datetime.fromisoformat(extended["ends_at"]) - datetime.fromisoformat(silence["ends_at"]) == timedelta(
        hours=1
    )
    r = await client.post(f"/ui/silences/{silence_id}/extend", data={"csrf": csrf, "duration": "soon"})
    assert r.status_code == 400 and "is not a duration" in r.text

    r = await client.post(f"/ui/silences/{silence_id}/expire", data={"csrf": csrf}, follow_redirects=False)
    assert r.headers["location"] == f"/ui/silences?state=expired&changed={silence_id}#{silence_id}"
    assert (await client.get(f"/v1/silences/{silence_id}", headers=auth)).json()["state"] == "expired"
    assert (await client.get(f"/v1/alerts/{fp}", headers=auth)).json()["state"] == "firing"
    page = (await client.get("/ui/silences", params={"state": "expired"})).text
    assert "Expire" not in row_of(page, silence_id)  # nothing more to do with it
    page = (await client.get("/ui/silences", params={"state": "active"})).text
    assert silence_id not in page and 'id="no-silences"' in page
    r = await client.post(f"/ui/silences/{silence_id}/extend", data={"csrf": csrf, "duration": "1h"})
    assert r.status_code == 409  # an expired silence cannot change


async def test_the_silence_form_keeps_what_was_typed_on_an_error(client, admin_token):
    await sign_in(client, admin_token)
    csrf = csrf_of((await client.get("/ui/silences/new")).text)
    base = {"csrf": csrf, "matchers": "team=payments", "duration": "2h", "comment": "deploy", "starts_at": ""}
    for change, message in (
        ({"matchers": "team=payments\nseverity=~(bad"}, "Invalid matcher"),
        ({"matchers": 'team=~".*"'}, "would match every alert"),
        ({"matchers": ""}, "at least one matcher"),
        ({"duration": "2 hours"}, "is not a duration"),
        ({"duration": "0m"}, "more than 0"),
        ({"comment": "  "}, "Say why"),
        ({"comment": "x" * 5000}, "length"),
        ({"starts_at": "tomorrow"}, "RFC 3339"),
        ({"starts_at": "9999-12-31T23:00:00+00:00"}, "must lie between 1970-01-01 and 2199-12-31"),
    ):
        r = await client.post("/ui/silences", data={**base, **change}, follow_redirects=False)
        assert r.status_code == 400, (change, r.status_code)
        assert message in html.unescape(section(r.text, 'id="form-error"', "</p>")), change
        typed = html.unescape(section(r.text, 'name="matchers"', "</textarea>").split(">", 1)[1])
        assert typed == change.get("matchers", base["matchers"])  # the form as it was typed
    # A NUL (PostgreSQL's text cannot hold it) and a CSRF value that is not ASCII: 400s, nothing stored.
    for field in ("comment", "matchers", "created_by"):
        r = await client.post("/ui/silences", data={**base, field: "a\x00b"}, follow_redirects=False)
        assert r.status_code == 400 and f"<code>{field}</code> contains a NUL character" in html.unescape(r.text), field
    r = await client.post("/ui/silences", data={**base, "csrf": "é"}, follow_redirects=False)
    assert r.status_code == 403
    assert (await client.post("/ui/logout", data={"csrf": "é"}, follow_redirects=False)).status_code == 403
    stored = await client.get("/v1/silences", headers={"Authorization": f"Bearer {admin_token}"})
    assert stored.json()["data"] == []
    later = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    r = await client.post("/ui/silences", data={**base, "starts_at": later.isoformat()}, follow_redirects=False)
    assert r.status_code == 303 and "state=pending" in r.headers["location"]
    assert "No silences" not in (await client.get("/ui/silences", params={"state": "pending"})).text


async def test_routing_page_shows_the_tree_and_tests_labels(client, auth, admin_token):
    pager, chat = await notifier(client, auth, "pager"), await notifier(client, auth, "chat")
    await put_routing(
        client,
        auth,
        {
            "route": {
                "notifier_ids": [chat],
                "group_by": ["alertname"],
                "group_wait_seconds": 10,
                "routes": [
                    {
                        "matchers": ["team=payments", 'severity=~"critical|page"'],
                        "notifier_ids": [pager],
                        "continue": True,
                        "repeat_interval_seconds": 3600,
                        "mute_time_intervals": ["always"],
                    },
                    {"matchers": ["team=payments"], "group_by": ["..."]},
                ],
            },
            "inhibit_rules": [{"source_matchers": ["severity=critical"], "target_matchers": ["severity=warning"]}],
            "time_intervals": [{"name": "always", "intervals": [{"weekdays": ["monday:sunday"]}]}],
        },
    )
    until = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    silence = await client.post(
        "/v1/silences", headers=auth, json={"matchers": ["team=payments"], "ends_at": until, "comment": "drill"}
    )
    await sign_in(client, admin_token)
    page = (await client.get("/ui/routing")).text
    root = section(page, 'id="route"', 'id="route.routes[0]"')
    assert ">chat</span>" in root and "inherited" not in root and "wait</span> 10s" in root
    first = section(page, 'id="route.routes[0]"', 'id="route.routes[1]"')
    assert "{team=payments, severity=~&#34;critical|page&#34;}" in first  # as written
    assert ">continue<" in first and ">pager</span>" in first and "muted now by always" in first
    assert "repeat</span> 1h" in first and 'group by</span> alertname <span class="muted inherited"' in first
    second = section(page, 'id="route.routes[1]"', "</li>")
    assert '>chat</span> <span class="muted inherited"' in second  # its parent's notifier, marked as such
    assert "every label" in second and 'wait</span> 10s <span class="muted inherited"' in second
    assert "<code>{severity=critical}</code>" in section(page, 'aria-label="Inhibit rules"')
    assert "monday:sunday" in section(page, 'id="interval-always"', "</div>")

    r = await client.get("/ui/routing", params={"labels": 'alertname=Latency\nteam=payments\nseverity="page"'})
    assert r.status_code == 200
    result = section(r.text, 'id="test-result"')
    taken = re.findall(r'class="route-taken" data-route="([^"]+)"', result)
    assert taken == ["route.routes[0]", "route.routes[1]"]
    assert "taken by the test" in section(r.text, 'id="route.routes[1]"', "</li>")
    assert "taken by the test" not in section(r.text, 'id="route"', 'id="route.routes[0]"')
    assert f'href="/ui/silences#{silence.json()["id"]}"' in section(result, 'id="verdict-silenced"', "</li>")
    assert "Not inhibited" in result and "Muted on some routes (always)" in result
    expected = (await client.post("/v1/routing/test", headers=auth, json={"labels": {
        "alertname": "Latency", "team": "payments", "severity": "page"}})).json()  # fmt: skip
    assert [html.unescape(k) for k in re.findall(r'class="group-key">([^<]+)<', result)] == [
        m["group_key"] for m in expected["routes"]
    ]
    assert "alertname=Latency" in r.text  # the form keeps the labels

    for labels, message in (("team payments", "is not a label"), ("9lives=x", "is not valid"), ("a=1\na=2", "twice")):
        r = await client.get("/ui/routing", params={"labels": labels})
        assert r.status_code == 400 and message in html.unescape(section(r.text, 'id="test-error"', "</p>"))


async def test_pages_need_their_scopes(client, make_token):
    token = await make_token(["datasets:read"])
    await sign_in(client, token)
    for path in ("/ui/alerts", "/ui/silences", "/ui/silences/new", "/ui/routing"):
        r = await client.get(path)
        assert r.status_code == 403, path
        assert "insufficient_scope" in r.text
    reader = await make_token(["alerts:read", "silences:read", "routing:read"])
    await sign_in(client, reader)
    for path in ("/ui/alerts", "/ui/silences", "/ui/routing?labels=a%3Db"):
        r = await client.get(path)
        assert r.status_code == 200, path
        assert r.headers["x-frame-options"] == "DENY" and r.headers["cache-control"] == "no-store"
        assert " style=" not in r.text and "<script>" not in r.text  # nothing inline the CSP would block
    page = (await client.get("/ui/silences")).text
    assert 'id="new-silence"' not in page and "cannot change silences" in page
    await sign_in(client, await make_token(["silences:read"]))
    assert "Silencing" not in (await client.get("/ui/silences")).text  # counting alerts needs alerts:read
    r = await client.post("/ui/silences", data={"csrf": csrf_of(page), "matchers": "a=b", "comment": "x"})
    assert r.status_code == 403


async def test_a_dataset_limited_token_sees_only_its_monitors_alerts(client, auth, make_token):
    await post_alerts(client, auth, {"labels": {"alertname": "External"}})
    web = await monitor_alert(client, auth, "web", "Web errors")
    db = await monitor_alert(client, auth, "db", "DB errors")
    alerts = (await client.get("/v1/alerts", headers=auth)).json()["data"]
    by_monitor = {a["source"].get("monitor_id"): a["fingerprint"] for a in alerts}
    assert {web, db, None} == set(by_monitor)

    limited = await make_token(["*"], datasets=["web"])
    await sign_in(client, limited)
    page = (await client.get("/ui/alerts")).text
    assert f"alert-{by_monitor[web]}" in page
    assert f"alert-{by_monitor[db]}" not in page and "External" not in page and "DB errors" not in page
    assert "1 firing · 0 suppressed" in html.unescape(page)
    assert f'<a class="alert-monitor" href="/ui/monitors#{web}">monitor</a>' in row_of(page, f"alert-{by_monitor[web]}")
    # Silences concern every dataset: a limited token does not make them, and cannot open another's alert.
    assert "silence-alert" not in page
    for alert in (by_monitor[db], by_monitor[web]):
        r = await client.get("/ui/silences/new", params={"alert": alert})
        assert r.status_code == 403 and "cannot change silences" in r.text
    r = await client.post(
        "/ui/silences",
        data={"csrf": csrf_of(page), "matchers": "alertname=x", "comment": "y", "duration": "1h"},
    )
    assert r.status_code == 403
    api = {"Authorization": f"Bearer {limited}"}
    until = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    body = {"matchers": ["a=b"], "ends_at": until, "comment": "x"}
    assert_error(await client.post("/v1/silences", headers=api, json=body), 403, "insufficient_scope")


async def test_a_big_outage_gives_a_bounded_page(client, auth, admin_token, monkeypatch):
    monkeypatch.setattr("app.ui.alerts.MAX_GROUPS", 2)
    monkeypatch.setattr("app.ui.alerts.MAX_PER_GROUP", 3)
    await put_routing(client, auth, {"route": {"notifier_ids": [], "group_by": ["cluster"]}})
    await post_alerts(
        client,
        auth,
        *({"labels": {"alertname": f"A{i}", "cluster": "eu"}} for i in range(5)),
        *({"labels": {"alertname": "B", "cluster": c}} for c in ("us", "ap", "sa")),
    )
    await sign_in(client, admin_token)
    page = (await client.get("/ui/alerts")).text
    assert "8 firing · 0 suppressed" in html.unescape(page) and "in 4 groups" in page  # counts cover everything
    assert page.count('<section class="card alert-group"') == 2 and page.count('<tr class="alert ') == 4
    assert "… and 2 more groups: narrow the filter" in page
    eu = section(page, 'data-group-key="{}:{cluster=&#34;eu&#34;}"')
    more = re.search(r'… and 2 more alerts: <a href="([^"]+)">show the whole group</a>', eu)
    assert more, eu
    whole = (await client.get(html.unescape(more.group(1)))).text
    assert whole.count('<section class="card alert-group"') == 1 and whole.count('<tr class="alert ') == 5
    assert 'id="one-group"' in whole and "more alerts" not in whole
