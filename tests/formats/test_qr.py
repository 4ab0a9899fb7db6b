"""QR codes decode back to the exact payment URI."""

from __future__ import annotations

import base64
import io
import xml.etree.ElementTree as ET

import pytest
import zxingcpp
from PIL import Image

from payments.qr import qr_png, qr_svg, qr_svg_data_uri
from payments.uris import bip21_uri, eip681_uri

SVG_NS = "{http://www.w3.org/2000/svg}"
URIS = [
    bip21_uri(address="bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", amount_sats=1, label="Café & Co"),
    eip681_uri(
        chain_id=1,
        recipient="0x52908400098527886E0F7030069857D2E4169EE7",
        amount_base_units=2**70,
        token_address="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    ),
]


def decode_png(png: bytes) -> list[str]:
    return [result.text for result in zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))]


@pytest.mark.parametrize("uri", URIS)
def test_the_qr_code_decodes_to_the_exact_uri(uri):
    assert decode_png(qr_png(uri)) == [uri]


def test_the_inline_svg_is_a_well_formed_svg_element_without_xml_declaration():
    svg = qr_svg(URIS[0])

    assert svg.startswith("<svg")
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG_NS}svg"
    assert root.find(f"{SVG_NS}path") is not None


def test_the_svg_and_the_png_draw_the_same_symbol():
    # The PNG is what the decoder reads; the SVG must be the same matrix at the same size.
    svg = ET.fromstring(qr_svg(URIS[1]))
    width = int(svg.get("width"))
    png = Image.open(io.BytesIO(qr_png(URIS[1])))

    assert png.size == (width, width)


def test_the_data_uri_wraps_the_same_svg():
    uri = qr_svg_data_uri(URIS[0])

    prefix = "data:image/svg+xml;base64,"
    assert uri.startswith(prefix)
    assert base64.b64decode(uri.removeprefix(prefix)).decode() == qr_svg(URIS[0])


def test_an_empty_payload_is_refused():
    with pytest.raises(ValueError):
        qr_svg("")
