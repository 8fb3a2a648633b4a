"""A token limited to datasets sees and touches only the annotations all of whose datasets it may use, and
creates annotations only on its own datasets: one id outside is a 404, lists leave it out."""

from __future__ import annotations

from tests.helpers import assert_error


async def _create(client, headers, datasets, title):
    r = await client.post(
        "/v1/annotations", headers=headers, json={"type": "deploy", "title": title, "datasets": datasets}
    )
    assert r.status_code == 201, r.text
    return r.json()


async def test_annotations_of_other_datasets_are_out_of_reach(client, auth, make_token):
    own = await _create(client, auth, ["pub"], "own")
    other = await _create(client, auth, ["secret"], "other")
    shared = await _create(client, auth, ["pub", "secret"], "shared")
    limited = {
        "Authorization": f"Bearer {await make_token(['annotations:read', 'annotations:write'], datasets=['pub'])}"
    }

    for params in ({}, {"datasets": "secret"}, {"datasets": "pub,secret"}, {"datasets": "pub"}):
        listed = (await client.get("/v1/annotations", headers=limited, params=params)).json()["data"]
        assert [a["title"] for a in listed] == ([] if params.get("datasets") == "secret" else ["own"]), params
    for a in (other, shared):
        assert_error(await client.get(f"/v1/annotations/{a['id']}", headers=limited), 404, "not_found")
        r = await client.patch(f"/v1/annotations/{a['id']}", headers=limited, json={"datasets": ["pub"]})
        assert_error(r, 404, "not_found")
        assert_error(await client.delete(f"/v1/annotations/{a['id']}", headers=limited), 404, "not_found")
        assert (await client.get(f"/v1/annotations/{a['id']}", headers=auth)).json() == a  # untouched

    # Created only on its own datasets; an own annotation cannot be moved onto another dataset.
    for datasets in (["secret"], ["pub", "secret"]):
        r = await client.post(
            "/v1/annotations", headers=limited, json={"type": "deploy", "title": "x", "datasets": datasets}
        )
        assert_error(r, 403, "insufficient_scope")
    r = await client.patch(f"/v1/annotations/{own['id']}", headers=limited, json={"datasets": ["pub", "secret"]})
    assert_error(r, 403, "insufficient_scope")
    assert (await client.get(f"/v1/annotations/{own['id']}", headers=auth)).json() == own
    mine = await _create(client, limited, ["pub"], "mine")
    assert (
        await client.patch(f"/v1/annotations/{mine['id']}", headers=limited, json={"title": "m"})
    ).status_code == 200
    assert (await client.delete(f"/v1/annotations/{own['id']}", headers=limited)).status_code == 204
    # The admin token still sees every annotation.
    titles = {a["title"] for a in (await client.get("/v1/annotations", headers=auth)).json()["data"]}
    assert titles == {"other", "shared", "m"}
