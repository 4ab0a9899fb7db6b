FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends \
      libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz0b fonts-dejavu-core \
      fonts-ipafont-gothic fonts-wqy-microhei fonts-lohit-deva \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 1000 app
WORKDIR /app
# The lock: every package pinned with its hashes (make lock, from requirements.in)
COPY requirements.txt .
RUN pip install --no-cache-dir --require-hashes -r requirements.txt
COPY . .
ENV VAR_DIR=/app/var
RUN mkdir -p var && SECRET_KEY=build-only FIELD_ENCRYPTION_KEY=build-only-not-a-key-build-only-not-a-key python manage.py collectstatic --noinput -v 0 && chown -R app var
USER app
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--config", "deploy/gunicorn.conf.py", "--bind", "0.0.0.0:8000", "--workers", "4"]
