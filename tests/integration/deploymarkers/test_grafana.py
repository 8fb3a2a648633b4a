"""Grafana's annotations API, driven by `grafana-client` (PyPI, Grafana's Python client, nobody here wrote it)
against the app behind a real uvicorn server: adding, finding, patching, replacing and deleting annotations, the
Graphite form, and the answers tools rely on (exactly 200 for Argo CD; Grafana's bodies).

grafana-client 3.x (on `requests`): its 4.x and later bring `niquests`, whose `urllib3-future` installs itself as
`urllib3` and breaks `requests` for everything else in the environment. Its calls block, so they run in a thread
while the server answers on the test's event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from grafana_client import GrafanaApi
from grafana_client.client import GrafanaClientError, GrafanaUnauthorizedError

T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)


def ms(t: datetime) -> int:
    return int(t.timestamp() * 1000)


class Grafana:
    """A GrafanaApi whose element methods are awaited (each call in a thread)."""

    def __init__(self, url: str, token: str) -> None:
        self.api = GrafanaApi.from_url(url, credential=token)
        self.annotations = self

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.api.annotations, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(method, *args, **kwargs)

        return call

    def close(self) -> None:
        self.api.client.s.close()


@pytest.fixture
def connect(served):
    opened: list[Grafana] = []

    def make(token: str) -> Grafana:
        opened.append(Grafana(served, token))
        return opened[-1]

    yield make
    for g in opened:
        g.close()


@pytest.fixture
def grafana(connect, admin_token):
    return connect(admin_token)


async def test_add_find_patch_update_delete_round_trip(grafana, served, auth):
    added = await grafana.annotations.add_annotation(
        dashboard_uid="web",
        panel_id=3,
        time_from=ms(T0),
        time_to=ms(T0 + timedelta(minutes=5)),
        tags=["deploy", "service:checkout", "env:prod"],
        text="checkout 1.4.2\nrolled out by Argo CD",
    )
    assert added["message"] == "Annotation added" and isinstance(added["id"], int)
    number = added["id"]

    found = await grafana.annotations.get_annotation(
        time_from=ms(T0 - timedelta(hours=1)), time_to=ms(T0 + timedelta(hours=1)), tags=["service:checkout"]
    )
    assert len(found) == 1
    one = found[0]
    # What was posted comes back as it was posted.
    assert one["id"] == number
    assert one["text"] == "checkout 1.4.2\nrolled out by Argo CD"
    assert one["tags"] == ["deploy", "service:checkout", "env:prod"]
    assert (one["time"], one["timeEnd"]) == (ms(T0), ms(T0 + timedelta(minutes=5)))
    assert (one["dashboardUID"], one["panelId"]) == ("web", 3)
    assert await grafana.annotations.get_annotation(tags=["service:cart"]) == []

    # Beacon's own view: a deploy on the dataset `web`, with the `key:value` tags as labels.
    async with httpx.AsyncClient(base_url=served, headers=auth) as http:
        (mine,) = (await http.get("/v1/annotations", params={"datasets": "web"})).json()["data"]
        assert mine["type"] == "deploy" and mine["title"] == "checkout 1.4.2"
        assert mine["labels"] == {"env": "prod", "service": "checkout"}
        assert mine["datasets"] == ["web"] and mine["origin"] == "grafana"

        # PATCH: a later timeEnd closes the span (grafana-client sends every key; its empty tags clear them, as
        # Grafana does, so the tags are given again).
        later = ms(T0 + timedelta(minutes=9))
        patched = await grafana.annotations.partial_update_annotation(
            number, time_to=later, tags=["deploy", "service:checkout", "env:prod"]
        )
        assert patched == {"message": "Annotation patched"}
        again = (await http.get(f"/v1/annotations/{mine['id']}")).json()
        assert again["end_time"] == (T0 + timedelta(minutes=9)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        assert again["title"] == "checkout 1.4.2" and again["labels"] == mine["labels"]

        # PUT replaces the text and the tags.
        updated = await grafana.annotations.update_annotation(
            number, time_from=ms(T0), time_to=later, tags=["rollback", "service:checkout"], text="rolled back"
        )
        assert updated == {"message": "Annotation updated"}
        (one,) = await grafana.annotations.get_annotation(tags=["rollback"])
        assert one["text"] == "rolled back" and one["tags"] == ["rollback", "service:checkout"]
        shown = (await http.get(f"/v1/annotations/{mine['id']}")).json()
        assert shown["type"] == "rollback" and shown["labels"] == {"service": "checkout"}

        deleted = await grafana.annotations.delete_annotations_by_id(number)
        assert deleted == {"message": "Annotation deleted"}
        assert (await http.get(f"/v1/annotations/{mine['id']}")).status_code == 404
    with pytest.raises(GrafanaClientError) as gone:
        await grafana.annotations.delete_annotations_by_id(number)
    assert gone.value.status_code == 404


async def test_graphite_form_and_organisation_annotations_are_environment_wide(grafana, served, auth):
    added = await grafana.annotations.add_annotation_graphite(
        what="deploy 42", tags="deploy release:42", when=int(T0.timestamp()), data="by CI"
    )
    assert added["message"] == "Graphite annotation added" and isinstance(added["id"], int)
    org = await grafana.annotations.add_annotation(tags=["config"], text="feature flag on")
    async with httpx.AsyncClient(base_url=served, headers=auth) as http:
        listed = {a["title"]: a for a in (await http.get("/v1/annotations")).json()["data"]}
    graphite = listed["deploy 42"]
    assert graphite["datasets"] == ["*"] and graphite["labels"] == {"release": "42"}
    assert graphite["description"] == "deploy 42\nby CI" and graphite["time"].startswith(T0.strftime("%Y-%m-%dT%H:%M"))
    assert listed["feature flag on"]["datasets"] == ["*"] and listed["feature flag on"]["type"] == "config"
    found = {a["id"]: a for a in await grafana.annotations.get_annotation()}
    assert found[added["id"]]["text"] == "deploy 42\nby CI" and found[added["id"]]["tags"] == ["deploy", "release:42"]
    assert found[org["id"]]["dashboardUID"] == ""


async def test_answers_a_tool_relies_on(served, admin_token, make_token):
    """Argo CD's grafana service treats any status but 200 as a failure; errors are Grafana's `{message}`."""
    body = {"time": ms(T0), "tags": ["argocd"], "text": "app synced"}
    async with httpx.AsyncClient(base_url=served) as http:
        ok = await http.post("/api/annotations", json=body, headers={"Authorization": f"Bearer {admin_token}"})
        assert ok.status_code == 200 and ok.json()["message"] == "Annotation added"
        assert "x-ratelimit-limit" in ok.headers
        missing = await http.post("/api/annotations", json=body)
        assert missing.status_code == 401 and set(missing.json()) == {"message"}
        bad = await http.post("/api/annotations", json=body, headers={"Authorization": "Bearer bcn_nope"})
        assert bad.status_code == 401 and "unknown, revoked or expired" in bad.json()["message"]
        reader = await make_token(["annotations:read"])
        refused = await http.post("/api/annotations", json=body, headers={"Authorization": f"Bearer {reader}"})
        assert refused.status_code == 403 and "annotations:write" in refused.json()["message"]
        empty = await http.post(
            "/api/annotations", json={"tags": ["x"]}, headers={"Authorization": f"Bearer {admin_token}"}
        )
        assert empty.status_code == 400 and "text field should not be empty" in empty.json()["message"]
        not_json = await http.post("/api/annotations", content=b"{", headers={"Authorization": f"Bearer {admin_token}"})
        assert not_json.status_code == 400 and set(not_json.json()) == {"message"}
        nul = await http.post(
            "/api/annotations", json={"text": "a\u0000b"}, headers={"Authorization": f"Bearer {admin_token}"}
        )
        assert nul.status_code == 400 and "NUL" in nul.json()["message"]
        odd_id = await http.get("/api/annotations/abc", headers={"Authorization": f"Bearer {admin_token}"})
        assert odd_id.status_code == 400 and odd_id.json() == {"message": "annotationId is invalid"}


async def test_a_limited_token_marks_its_own_datasets(connect, make_token):
    limited = await make_token(["annotations:read", "annotations:write"], datasets=["pub"])
    grafana = connect(limited)
    org = await grafana.annotations.add_annotation(tags=["deploy", "service:checkout"], text="pub 2.0")
    (shown,) = await grafana.annotations.get_annotation()
    assert shown["id"] == org["id"] and shown["dashboardUID"] == "pub"
    with pytest.raises(GrafanaClientError) as refused:
        await grafana.annotations.add_annotation(dashboard_uid="secret", tags=["deploy"], text="elsewhere")
    assert refused.value.status_code == 403
    with pytest.raises(GrafanaUnauthorizedError):
        await connect("bcn_wrong").annotations.get_annotation()
