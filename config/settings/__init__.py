"""Settings for the service. Every value comes from the environment (docs/settings.md lists them)."""

from config.settings.base import *  # noqa: F403
from config.settings.per_app import *  # noqa: F403
