"""`python -m bot.ops.probe [PATH]`: ask the running bot's web server, exit 0 or 1.

The Docker image's HEALTHCHECK (a slim image has no curl). It reads `WEB_PORT` and
`WEB_HOST` from the environment, as the bot does (`0.0.0.0` or `::`, every address, is
asked on loopback; no `WEB_PORT` with `WEBHOOK_URL` set is 8080), GETs PATH (default
``/healthz``) with no proxy and a 4 s timeout, and exits 0 on 200, 1 on anything else
(another status, no answer, WEB_PORT not set), with one line on stderr saying why.
"""

from __future__ import annotations

import http.client
import os
import sys

TIMEOUT = 4.0


def probe(path: str = "/healthz") -> int:
    port = os.environ.get("WEB_PORT", "").strip()
    if not port and os.environ.get("WEBHOOK_URL", "").strip():
        port = "8080"  # the bot's in webhook mode where WEB_PORT is not set (bot.config)
    if not port.isdigit():
        print("probe: WEB_PORT is not set: the bot serves no health checks", file=sys.stderr)
        return 1
    host = os.environ.get("WEB_HOST", "").strip() or "127.0.0.1"
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace").strip()
    except OSError as error:
        print(f"probe: no answer from {host}:{port}{path}: {error}", file=sys.stderr)
        return 1
    finally:
        connection.close()
    if response.status != 200:
        print(f"probe: {path} answered {response.status}: {body[:500]}", file=sys.stderr)
        return 1
    return 0


def main() -> None:
    raise SystemExit(probe(sys.argv[1] if len(sys.argv) > 1 else "/healthz"))


if __name__ == "__main__":
    main()
