from django.apps import AppConfig


class AboutConfig(AppConfig):
    """What the service says about itself: probes, /metrics, llms.txt, the OpenAPI document, start notices."""

    name = "about"
