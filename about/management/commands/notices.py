from django.core.management.base import BaseCommand

from about.notices import setup_notices


class Command(BaseCommand):
    help = "Print what this deployment leaves off and which setting turns it on (one line each)."

    def handle(self, *args, **options) -> None:
        for line in setup_notices():
            self.stdout.write(f"Note: {line}")
