from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class FeesConfig(AppConfig):
    name = "fees"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A mistyped operator address would send every fee output and settlement astray:
        # refuse to start instead (web, worker and beat all load this).
        from payments.addresses import AddressError, check_address

        for network, address in settings.PLATFORM_FEE_ADDRESSES.items():
            try:
                check_address(network, address)
            except AddressError as exc:
                raise ImproperlyConfigured(
                    f"FEE_ADDRESS_{network.upper()}={address!r} is not a valid {network} address: {exc}"
                ) from exc
