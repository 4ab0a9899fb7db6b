import os

from django.core.asgi import get_asgi_application

from core.env import load_local_env

load_local_env()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_asgi_application()
