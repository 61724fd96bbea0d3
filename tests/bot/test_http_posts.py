"""`bot.web.WebServer`'s post routes, the webhook's ground (#20, #30): POST only, a body of at
most `bot.web.BODY_LIMIT` bytes, other paths 404; `drain` lets a request under way finish
while a new connection is refused."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from aiohttp import web

from bot.ops.health import Health
from bot.web import BODY_LIMIT, WebServer


def health() -> Health:
    return Health(database=lambda: None)


async def test_post_routes_take_only_posts_with_a_bounded_body() -> None:
    seen: list[tuple[str, str, bytes, str]] = []

    async def hook(request: web.Request) -> web.Response:
        seen.append(
            (request.method, request.path, await request.read(), request.headers["x-secret"])
        )
        return web.Response(text="ok\n")

    server = WebServer(health(), "127.0.0.1", 0, posts={"/hook": hook})
    await server.start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        async with httpx.AsyncClient(base_url=base, trust_env=False) as client:
            answer = await client.post("/hook", content=b'{"a": 1}', headers={"X-Secret": "s"})
            assert answer.status_code == 200
            assert (await client.get("/hook")).status_code == 405
            assert (await client.post("/elsewhere", content=b"x")).status_code == 404
            too_large = await client.post(
                "/hook", content=b"x" * (BODY_LIMIT + 1), headers={"X-Secret": "s"}
            )
            assert too_large.status_code == 413
    finally:
        await server.close()
    assert seen == [("POST", "/hook", b'{"a": 1}', "s")]


async def test_drain_finishes_the_request_under_way_and_refuses_new_ones() -> None:
    entered, leave = asyncio.Event(), asyncio.Event()

    async def hook(request: web.Request) -> web.Response:
        entered.set()
        await leave.wait()
        return web.Response(text="done\n")

    server = WebServer(health(), "127.0.0.1", 0, posts={"/hook": hook})
    await server.start()
    url = f"http://127.0.0.1:{server.port}/hook"
    try:
        async with httpx.AsyncClient(trust_env=False) as client:
            under_way = asyncio.ensure_future(client.post(url, content=b"{}"))
            await entered.wait()
            draining = asyncio.ensure_future(server.drain())
            await asyncio.sleep(0)  # let drain stop listening (not a wait for the outcome)
            with pytest.raises(httpx.ConnectError):
                await client.post(url, content=b"{}")
            assert not draining.done()
            leave.set()
            assert (await under_way).status_code == 200
            await draining
    finally:
        await server.close()
