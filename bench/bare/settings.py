"""The bare baseline app of `make bench`: Django + DRF doing the floor of the drafts API's work.

A hashed Bearer-key SELECT, body validation, one INSERT and a JSON answer for a creation;
the key SELECT and a one-row SELECT for a read. Same Django, DRF and psycopg as the project
(the same virtualenv), served by the same gunicorn settings against the same PostgreSQL.
"""

import os

import dj_database_url

SECRET_KEY = os.environ.get("SECRET_KEY", "bench-bare-not-secret")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
USE_TZ = True
TIME_ZONE = "UTC"
ROOT_URLCONF = "bench.bare.urls"
WSGI_APPLICATION = "bench.bare.wsgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = ["rest_framework", "bench.bare"]
# The two middlewares any production Django app keeps.
MIDDLEWARE = ["django.middleware.security.SecurityMiddleware", "django.middleware.common.CommonMiddleware"]

# Persistent connections as the project's default (DATABASE_CONN_MAX_AGE=60).
DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60)}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["bench.bare.auth.KeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["bench.bare.auth.HasKey"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "UNAUTHENTICATED_USER": None,
}

LOGGING = {"version": 1, "disable_existing_loggers": False}
