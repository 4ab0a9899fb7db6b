"""/api/v1/recurring-templates: create, list, pause, resume, delete, with permissions and bad input."""

import pytest
import time_machine
from django.utils.dateparse import parse_datetime

from recurring.models import RecurringTemplate
from tests.drafts.conftest import ADDRESSES
from tests.recurring.conftest import template_body, usdc_draft

pytestmark = pytest.mark.django_db

URL = "/api/v1/recurring-templates"
NOW = parse_datetime("2027-01-20T12:00:00Z")


@pytest.fixture(autouse=True)
def _frozen():
    with time_machine.travel(NOW, tick=False):
        yield


def test_a_template_is_created_with_its_first_run_and_listed_in_a_paged_envelope(api_client):
    response = api_client.post(URL, template_body(), format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["name"], body["interval"], body["timezone"], body["paused"]) == ("Rent", "Monthly", "UTC", False)
    assert body["nextRunAt"] == "2027-01-31T09:00:00Z" and body["firstRunAt"] == "2027-01-31T09:00:00Z"
    assert body["lastRunAt"] is None and body["lastRefusal"] is None
    assert body["draft"]["fiatAmount"] == 49.5  # a JSON number, as its schema says and as it was sent
    assert body["createdAt"] == "2027-01-20T12:00:00Z"
    assert api_client.get(URL).json() == {"items": [body], "page": 1, "pageSize": 20, "total": 1, "next": None}
    assert api_client.get(f"{URL}/{body['id']}").json() == body


def test_without_first_run_at_the_first_run_is_now(api_client):
    body = api_client.post(URL, template_body(firstRunAt=None, interval="Daily"), format="json").json()

    assert body["nextRunAt"] == "2027-01-20T12:00:00Z"


def test_a_first_run_in_the_past_anchors_the_schedule_and_runs_next_at_the_following_time(api_client):
    body = api_client.post(
        URL, template_body(interval="Weekly", firstRunAt="2027-01-01T08:00:00Z"), format="json"
    ).json()

    assert body["nextRunAt"] == "2027-01-22T08:00:00Z"


def test_pause_and_resume_answer_with_the_template_and_resume_does_not_make_up_the_pause(api_client):
    template = api_client.post(URL, template_body(interval="Daily", firstRunAt="2027-01-21T09:00:00Z"), format="json")
    url = f"{URL}/{template.json()['id']}"

    paused = api_client.post(f"{url}/pause")
    assert paused.status_code == 200
    assert paused.json()["paused"] is True and paused.json()["nextRunAt"] is None
    assert api_client.post(f"{url}/pause").status_code == 200  # pausing twice is harmless

    with time_machine.travel(parse_datetime("2027-01-25T10:00:00Z"), tick=False):
        resumed = api_client.post(f"{url}/resume")
    assert resumed.status_code == 200
    assert resumed.json()["paused"] is False
    assert resumed.json()["nextRunAt"] == "2027-01-26T09:00:00Z"


def test_delete_answers_with_the_deleted_template(api_client):
    template = api_client.post(URL, template_body(), format="json").json()

    response = api_client.delete(f"{URL}/{template['id']}")

    assert response.status_code == 200 and response.json()["id"] == template["id"]
    assert not RecurringTemplate.objects.exists()
    assert api_client.get(f"{URL}/{template['id']}").status_code == 404


@pytest.mark.parametrize(
    ("overrides", "field", "code"),
    [
        ({"interval": "Hourly"}, "interval", "invalid_choice"),
        ({"interval": "daily"}, "interval", "invalid_choice"),
        ({"timezone": "Mars/Olympus_Mons"}, "timezone", "invalid_timezone"),
        ({"firstRunAt": "next tuesday"}, "firstRunAt", "invalid"),
        ({"draft": usdc_draft(receiverAddress=ADDRESSES["Ethereum"].lower()[:-1])}, "draft.receiverAddress", None),
        ({"draft": usdc_draft(currency="SOL")}, "draft.currency", "unsupported_combination"),
        ({"draft": usdc_draft(fiatAmount=None)}, "draft.fiatAmount", None),
        ({"draft": usdc_draft(bolt11="lnbc1...")}, "draft.bolt11", None),
        (
            {"draft": usdc_draft(network="Mainnet", currency="BTC", receiverAddress=ADDRESSES["Testnet"])},
            "draft.receiverAddress",
            "invalid_address",
        ),
        ({"colour": "red"}, "colour", "unknown_field"),
        ({"draft": None}, "draft", None),
    ],
)
def test_bad_input_is_a_problem_naming_the_field_and_stores_nothing(api_client, overrides, field, code):
    response = api_client.post(URL, template_body(**overrides), format="json")

    assert response.status_code == 400, response.json()
    assert response["Content-Type"] == "application/problem+json"
    errors = {e["field"]: e["code"] for e in response.json()["errors"]}
    assert field in errors, errors
    if code:
        assert errors[field] == code
    assert not RecurringTemplate.objects.exists()


def test_a_template_may_pay_an_address_book_entry(api_client):
    entry = api_client.post(
        "/api/v1/address-book",
        {"address": ADDRESSES["Base"], "network": "Base", "direction": "Receiving", "label": "Landlord"},
        format="json",
    ).json()
    draft = usdc_draft(receiverAddress=None, addressBookId=entry["id"])

    response = api_client.post(URL, template_body(draft=draft), format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["draft"]["addressBookId"] == entry["id"]
    # The entry is in use: it cannot be deleted from under the template.
    assert api_client.delete(f"/api/v1/address-book/{entry['id']}").status_code == 409


def test_a_template_cannot_name_a_sending_entry(api_client):
    entry = api_client.post(
        "/api/v1/address-book",
        {"address": ADDRESSES["Base"], "network": "Base", "direction": "Sending"},
        format="json",
    ).json()

    response = api_client.post(
        URL, template_body(draft=usdc_draft(receiverAddress=None, addressBookId=entry["id"])), format="json"
    )

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "draft.addressBookId"


def test_another_accounts_template_is_not_found(api_client, client_with_scopes, other_account):
    template = api_client.post(URL, template_body(), format="json").json()
    other = client_with_scopes("templates:manage", user=other_account)

    for response in (
        other.get(f"{URL}/{template['id']}"),
        other.post(f"{URL}/{template['id']}/pause"),
        other.post(f"{URL}/{template['id']}/resume"),
        other.delete(f"{URL}/{template['id']}"),
    ):
        assert response.status_code == 404
    assert other.get(URL).json()["total"] == 0
    assert RecurringTemplate.objects.get(pk=template["id"]).paused is False


def test_anonymous_callers_are_refused(anon_client):
    assert anon_client.get(URL).status_code == 401
    assert anon_client.post(URL, template_body(), format="json").status_code == 401


def test_a_key_without_the_templates_scope_is_refused(client_with_scopes, api_client):
    template = api_client.post(URL, template_body(), format="json").json()
    client = client_with_scopes("drafts:read", "drafts:write")

    assert client.post(URL, template_body(), format="json").status_code == 403
    assert client.get(URL).status_code == 403
    assert client.post(f"{URL}/{template['id']}/pause").json()["code"] == "missing_scope"
    assert client.delete(f"{URL}/{template['id']}").status_code == 403
