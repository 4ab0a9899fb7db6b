from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class FeesConfig(AppConfig):
    name = "fees"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A mistyped operator address would send every fee output and settlement astray:
        # refuse to start instead (web, worker and beat all load this).
        from fees.calculator import fee_tiers
        from payments.addresses import AddressError, check_address

        fee_tiers()  # a malformed FEE_TIERS stops the process here, naming the variable

        for network, (variable, address) in settings.PLATFORM_FEE_ADDRESS_VARIABLES.items():
            if not address:
                continue
            try:
                check_address(network, address)
            except AddressError as exc:
                raise ImproperlyConfigured(f"{variable}={address!r} is not a valid {network} address: {exc}") from exc
