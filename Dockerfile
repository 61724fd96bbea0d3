# The bot in a slim image: non-root user, the database on a volume, `python -m bot`.

# Stage 1: compile the engine with mypyc (tools/compile_engine.py). The C compiler stays here.
FROM python:3.11-slim AS engine
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY storage ./storage
COPY bot ./bot
COPY tools ./tools
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
    DATABASE_URL=sqlite:////data/durak.sqlite3

RUN useradd --create-home --uid 10001 durak \
    && mkdir /data && chown durak:durak /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY storage ./storage
COPY bot ./bot
COPY locales ./locales
RUN pip install -e .
COPY --from=engine /opt/engine /opt/engine

USER durak
# Fails the build unless the bot's user imports the compiled engine.
RUN python -c "import engine; assert engine.COMPILED, engine.__file__"
VOLUME ["/data"]
CMD ["python", "-m", "bot"]
