"""Honeycomb's markers API as `honeymarker` (Honeycomb's Go CLI) calls it: its requests carry the marker struct
with the server-assigned fields zero-valued (`"id": ""`, Go's zero time), the key in `X-Honeycomb-Team`; `add`
accepts any 2xx, `update` and `rm` exactly 200."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)
GO_ZERO = "0001-01-01T00:00:00Z"


def marker(**fields):
    """What honeymarker's `json.Marshal(Marker{...})` sends: every field, zero values included."""
    return {"id": "", "created_at": GO_ZERO, "updated_at": GO_ZERO, **fields}


async def test_honeymarker_add_list_update_rm(served, admin_token, auth):
    team = {"X-Honeycomb-Team": admin_token, "User-Agent": "honeymarker/0.2.10"}
    start = int(T0.timestamp())
    async with httpx.AsyncClient(base_url=served) as http:
        added = await http.post(
            "/1/markers/web",
            headers=team,
            json=marker(start_time=start, message="deploy #42", type="deploy", url="https://ci.example.com/42"),
        )
        assert added.status_code == 201, added.text
        m = added.json()
        assert m["id"].startswith("ann_") and m["start_time"] == start and "end_time" not in m
        assert (m["message"], m["type"], m["url"]) == ("deploy #42", "deploy", "https://ci.example.com/42")
        assert m["created_at"] != GO_ZERO

        listed = (await http.get("/1/markers/web", headers=team)).json()
        assert [x["id"] for x in listed] == [m["id"]]
        assert (await http.get("/1/markers/other", headers=team)).json() == []

        # honeymarker update: only what it was told (here the end), the rest zero-valued and left alone.
        updated = await http.put(f"/1/markers/web/{m['id']}", headers=team, json=marker(end_time=start + 300))
        assert updated.status_code == 200
        assert updated.json()["end_time"] == start + 300 and updated.json()["message"] == "deploy #42"
        shown = (await http.get(f"/v1/annotations/{m['id']}", headers=auth)).json()
        assert shown["datasets"] == ["web"] and shown["origin"] == "honeycomb" and shown["end_time"]

        # The marker is the dataset's: under another dataset it is not found.
        other = await http.delete(f"/1/markers/other/{m['id']}", headers=team)
        assert other.status_code == 404 and other.json() == {"error": "marker not found"}
        removed = await http.delete(f"/1/markers/web/{m['id']}", headers=team)
        assert removed.status_code == 200 and removed.json()["id"] == m["id"]
        assert (await http.get("/1/markers/web", headers=team)).json() == []


async def test_environment_wide_markers_and_errors(served, admin_token, make_token):
    team = {"X-Honeycomb-Team": admin_token}
    async with httpx.AsyncClient(base_url=served) as http:
        everywhere = await http.post("/1/markers/__all__", headers=team, json=marker(message="flag flip"))
        assert everywhere.status_code == 201
        assert everywhere.json()["type"] == "marker"
        assert [x["message"] for x in (await http.get("/1/markers/__all__", headers=team)).json()] == ["flag flip"]
        # Honeymarker's `-k` missing, or a wrong key: Honeycomb's `{error}`.
        missing = await http.post("/1/markers/web", json=marker(message="x"))
        assert missing.status_code == 401 and "X-Honeycomb-Team" in missing.json()["error"]
        wrong = await http.post("/1/markers/web", headers={"X-Honeycomb-Team": "nope"}, json=marker(message="x"))
        assert wrong.status_code == 401 and set(wrong.json()) == {"error"}
        # honeymarker can also send `Authorization: Bearer` (its --authorization-header).
        bearer = await http.post(
            "/1/markers/web", headers={"Authorization": f"Bearer {admin_token}"}, json=marker(message="y")
        )
        assert bearer.status_code == 201
        nul = await http.post("/1/markers/web", headers=team, json=marker(message="a\u0000b"))
        assert nul.status_code == 400 and "NUL" in nul.json()["error"]
        bad_name = await http.post("/1/markers/bad%20name", headers=team, json=marker(message="x"))
        assert bad_name.status_code == 400 and set(bad_name.json()) == {"error"}
        limited = {"X-Honeycomb-Team": await make_token(["annotations:write"], datasets=["pub"])}
        refused = await http.post("/1/markers/__all__", headers=limited, json=marker(message="x"))
        assert refused.status_code == 403 and "environment-wide" in refused.json()["error"]
        assert (await http.post("/1/markers/pub", headers=limited, json=marker(message="ok"))).status_code == 201
