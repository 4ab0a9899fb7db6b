"""Amount collisions on the embedded default (SQLite) answer 409 or nudge, never 500.

SQLite's IntegrityError names columns where PostgreSQL names the constraint, so the clash is
detected by reading the open drafts again; this runs creation against a real SQLite file."""

from __future__ import annotations

from tests.sqlite import run_on_sqlite


def test_on_sqlite_same_amount_twice_is_a_409_fiat_is_nudged_and_drafts_read_back_whole(tmp_path):
    first, clash, fiat_first, fiat_second, keyed, fees, refusal = run_on_sqlite(
        "tests.drafts.sqlite_collisions", tmp_path
    )
    assert first["status"] == 201
    assert clash["status"] == 409 and clash["body"]["code"] == "amount_collision"
    assert clash["body"]["openDraftId"] == first["body"]["id"]
    assert fiat_first["status"] == fiat_second["status"] == 201
    assert fiat_second["body"]["amountSats"] == fiat_first["body"]["amountSats"] + 1

    # The statements built once per process read and write SQLite's types right.
    assert keyed["replayed"] == keyed["created"] and keyed["replayHeader"] == "true"
    assert keyed["read"] == keyed["created"] and keyed["drafts"] == 4
    assert fees["isDecimal"] and fees["total"] == fees["expected"] and fees["total"] != "0"
    assert refusal["outcomes"] == ["refused", "written"]
    assert len(refusal["keys"]) == 1 and refusal["keys"][0] != f"u-{first['body']['amountSats']}"
