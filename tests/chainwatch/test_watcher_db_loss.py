"""A watcher pass that lost its database connection still records why it failed."""

import psycopg
import pytest
from django.db import connection

from chainwatch.models import Cursor
from chainwatch.tasks import watcher_run
from payments.enums import Network

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_pass_whose_connection_died_records_the_error_on_a_fresh_one(settings):
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": "http://127.0.0.1:9/"}}
    Cursor.objects.create(network=Network.ETHEREUM, family="evm", height=10)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    params = connection.get_connection_params()
    with psycopg.connect(
        host=params.get("host"), port=params.get("port"), user=params.get("user"), dbname=params["dbname"]
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])  # as a database restart does

    watcher_run(Network.ETHEREUM, "evm")

    cursor = Cursor.objects.get(network=Network.ETHEREUM, family="evm")
    assert cursor.last_error_at is not None
    assert cursor.last_error.startswith(("OperationalError", "InterfaceError")), cursor.last_error
