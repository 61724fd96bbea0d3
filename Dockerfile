# The bot in a slim image: non-root user, the database on a volume, `python -m bot`.
# `make lint` (and tests/test_docker.py) check this file with hadolint; the findings it
# would report are ignored below, each with its reason.

# Stage 1: compile the engine with mypyc (tools/compile_engine.py). The C compiler stays here.
FROM python:3.11-slim AS engine
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# DL3008 (pin apt versions): Debian's archive keeps only the current version of a package,
# so a pin breaks the build at its next security update; the compiler stays in this stage.
# hadolint ignore=DL3008
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY storage ./storage
COPY bot ./bot
COPY tools ./tools
# DL3013 (pin pip versions): what is installed is this project; its dependencies' ranges are
# in pyproject.toml.
# hadolint ignore=DL3013
RUN pip install '.[dev]' && python tools/compile_engine.py /opt/engine

# Stage 2: the bot, running the compiled engine (PYTHONPATH; PYTHONSAFEPATH keeps /app's
# pure-Python engine behind it).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONSAFEPATH=1 \
    PYTHONPATH=/opt/engine \
    DATABASE_URL=sqlite:////data/durak.sqlite3 \
    WEB_PORT=8080

RUN groupadd --gid 10001 durak \
    && useradd --create-home --uid 10001 --gid 10001 durak \
    && mkdir /data && chown durak:durak /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY storage ./storage
COPY bot ./bot
COPY locales ./locales
# hadolint ignore=DL3013
RUN pip install -e .
COPY --from=engine /opt/engine /opt/engine

# Numeric, so that Kubernetes' runAsNonRoot can tell it is not root.
USER 10001:10001
# Fails the build unless the bot's user imports the compiled engine.
RUN python -c "import engine; assert engine.COMPILED, engine.__file__"
VOLUME ["/data"]

# The web server (docs/operating.md): WEB_PORT is set above, for /healthz, /readyz and
# /metrics, and in webhook mode Telegram's posts. It binds loopback (WEB_HOST's default),
# which the HEALTHCHECK, run inside the container, reaches; nothing is reachable from
# outside. For a reverse proxy in another container (webhook mode, docker-compose.yml),
# Prometheus or Kubernetes' probes (the kubelet connects to the pod's address, not its
# loopback) run with WEB_HOST=0.0.0.0 (and publish the port for a scraper outside Docker's
# networks). The check asks /healthz, not /readyz: what acts on
# it restarts the container, which helps a stuck bot but not a database outage; watch
# /readyz for those. Unset WEB_PORT (an empty value) with long polling and the server is
# off, and so the check fails: then also --no-healthcheck.
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-m", "bot.ops.probe", "/healthz"]
CMD ["python", "-m", "bot"]
