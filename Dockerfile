# The bot in a slim image: non-root user, the database on a volume, `python -m bot`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
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

USER durak
VOLUME ["/data"]
CMD ["python", "-m", "bot"]
