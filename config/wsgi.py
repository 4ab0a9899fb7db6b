import os

from django.core.wsgi import get_wsgi_application

from core.env import load_local_env
from core.runtime import apply_runtime_guards, web_process_ready

load_local_env()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()
apply_runtime_guards()  # also done in the platform app's ready(); repeated here as the last word
web_process_ready()  # the URLconf loaded, start-up's objects out of the collector's way
