# Quire's production image: one image, three roles (web, worker, beat); see docker-compose.yml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings \
    MEDIA_ROOT=/app/var/media

WORKDIR /app

# QUIRE_S3=1 adds the optional S3 storage for attachments (requirements-s3.txt).
ARG QUIRE_S3=0
COPY requirements.txt requirements-s3.txt ./
RUN pip install -r requirements.txt \
    && if [ "$QUIRE_S3" = "1" ]; then pip install -r requirements-s3.txt; fi

COPY . .
# The embedding model's int8 form, made once here rather than by each container at start.
RUN python -m wiki.quantized /app/var/models
RUN useradd --create-home --uid 1000 --shell /usr/sbin/nologin quire \
    && mkdir -p /app/var/media /app/staticfiles \
    && chown -R quire:quire /app/var /app/staticfiles \
    && chmod +x /app/docker/entrypoint.sh

USER quire
EXPOSE 8000
ENTRYPOINT ["/app/docker/entrypoint.sh"]
CMD ["web"]
