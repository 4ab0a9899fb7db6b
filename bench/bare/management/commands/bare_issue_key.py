import secrets

from django.core.management.base import BaseCommand

from bench.bare.auth import hash_key
from bench.bare.models import Key


class Command(BaseCommand):
    help = "Create a key and print it (only its hash is stored)."

    def handle(self, *args, **options) -> None:
        token = f"bare_{secrets.token_urlsafe(32)}"
        Key.objects.create(key_hash=hash_key(token))
        self.stdout.write(token)
