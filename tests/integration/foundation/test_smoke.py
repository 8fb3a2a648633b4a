async def test_healthz(client):
    r = await client.get("/healthz")
    assert r.status_code == 200
    assert r.headers["x-request-id"].startswith("req_")
