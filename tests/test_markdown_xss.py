"""A fixed corpus of XSS payloads: every one must come out of render_markdown inert."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

from wiki.markdown import render_markdown

PAYLOADS = [
    # script and friends
    "<script>alert(1)</script>",
    "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    '<script\x20type="text/javascript">alert(1);</script>',
    "<<script>alert(1);//<</script>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "<style>@import 'https://evil.example/x.css';</style>",
    '<object data="javascript:alert(1)"></object>',
    '<embed src="javascript:alert(1)">',
    '<form action="javascript:alert(1)"><input type=submit></form>',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<base href="javascript:alert(1)//">',
    '<link rel="stylesheet" href="javascript:alert(1)">',
    # event handler attributes
    "<img src=x onerror=alert(1)>",
    '<img src="x" ONERROR="alert(1)">',
    "<img/src=x/onerror=alert(1)>",
    '<body onload="alert(1)">',
    '<div onmouseover="alert(1)">hover</div>',
    '<a href="https://example.com" onclick="alert(1)">click</a>',
    '<details open ontoggle="alert(1)"><summary>x</summary></details>',
    '<p onpointerenter="alert(1)" style="position:fixed;inset:0">cover</p>',
    '<input autofocus onfocus="alert(1)">',
    '<video><source onerror="alert(1)"></video>',
    '<marquee onstart="alert(1)">x</marquee>',
    # javascript:, data:, vbscript: URLs in any case, with entities and whitespace
    '<a href="javascript:alert(1)">x</a>',
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    '<a href="&#106;avascript:alert(1)">x</a>',
    '<a href="&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;:alert(1)">x</a>',
    '<a href="&#0000106&#0000097vascript:alert(1)">x</a>',
    '<a href=" javascript:alert(1)">x</a>',
    '<a href="java\tscript:alert(1)">x</a>',
    '<a href="java&#x09;script:alert(1)">x</a>',
    '<a href="java&NewLine;script:alert(1)">x</a>',
    '<a href="jav&#x0A;ascript:alert(1)">x</a>',
    '<a href="javascript&colon;alert(1)">x</a>',
    '<a href="vbscript:msgbox(1)">x</a>',
    '<a href="VBScript:msgbox(1)">x</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
    '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
    '<img src="javascript:alert(1)">',
    '<a href="\x01javascript:alert(1)">x</a>',
    # SVG and MathML
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">x</text></a></svg>',
    '<svg><animate onbegin="alert(1)" attributeName="x" dur="1s"/></svg>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    # iframes and frames
    '<iframe src="javascript:alert(1)"></iframe>',
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    '<IFRAME SRC="https://evil.example"></IFRAME>',
    '<frameset><frame src="javascript:alert(1)"></frameset>',
    # markdown link and image forms
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](  javascript:alert(1)  )",
    "[x](&#106;avascript:alert(1))",
    "[x](javascript&#58;alert(1))",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![x](javascript:alert(1))",
    '![x](https://example.com/a.png"onerror="alert(1))',
    "![x](data:image/svg+xml,<svg onload=alert(1)>)",
    "[x][ref]\n\n[ref]: javascript:alert(1)",
    '[x][ref]\n\n[ref]: JAVASCRIPT:alert(1) "title"',
    "<javascript:alert(1)>",
    "[<img src=x onerror=alert(1)>](https://example.com)",
    # comments, CDATA and parser tricks
    "<!-- --><script>alert(1)</script><!-- -->",
    '<!--<img src="--><img src=x onerror=alert(1)//">',
    "<![CDATA[<script>alert(1)</script>]]>",
    "<a href='x'\nonclick=alert(1)>x</a>",
    '<img """><script>alert(1)</script>">',
    "`code` <img src=x onerror=alert(1)> **bold**",
    "```html\n<script>alert(1)</script>\n```\n\n<script>alert(2)</script>",
    # style attributes
    '<span style="background:url(javascript:alert(1))">x</span>',
    '<div style="width: expression(alert(1))">x</div>',
    '<p style="position:fixed;top:0;left:0;width:100%;height:100%">overlay</p>',
    # page reference syntax must not open a hole
    "[[pg_abcdefgh]]<img src=x onerror=alert(1)>",
    '[[file:"><script>alert(1)</script>]]',
]

DANGEROUS_ELEMENTS = {
    "script",
    "iframe",
    "frame",
    "frameset",
    "svg",
    "math",
    "object",
    "embed",
    "style",
    "form",
    "meta",
    "base",
    "link",
    "input",
    "video",
    "source",
    "body",
    "noscript",
    "marquee",
}
DANGEROUS_SCHEMES = {"javascript", "data", "vbscript"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "srcdoc", "data"}
_IGNORED_IN_URL = re.compile(r"[\x00-\x20\x7f]+")


class _Inspector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in DANGEROUS_ELEMENTS:
            self.problems.append(f"<{tag}> element")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"{name} attribute on <{tag}>")
            if name == "style":
                self.problems.append(f"style attribute on <{tag}>")
            if name in URL_ATTRIBUTES and value is not None:
                url = _IGNORED_IN_URL.sub("", html.unescape(value)).lower()
                scheme = url.split(":", 1)[0] if ":" in url else ""
                if scheme in DANGEROUS_SCHEMES:
                    self.problems.append(f"{name}={value!r} on <{tag}>")

    handle_startendtag = handle_starttag


def _problems(rendered: str) -> list[str]:
    inspector = _Inspector()
    inspector.feed(rendered)
    inspector.close()
    return inspector.problems


def test_it_has_a_corpus_of_at_least_forty_payloads() -> None:
    assert len(PAYLOADS) >= 40
    assert len(set(PAYLOADS)) == len(PAYLOADS)


def test_it_detects_a_live_payload_so_the_check_itself_works() -> None:
    assert _problems('<a href="JaVa&#x09;Script:alert(1)" onclick="x">x</a><svg></svg>') == [
        "href='JaVa\\tScript:alert(1)' on <a>",
        "onclick attribute on <a>",
        "<svg> element",
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("payload", PAYLOADS)
def test_it_renders_the_payload_inert(payload: str) -> None:
    rendered = render_markdown(payload)
    assert _problems(rendered) == [], rendered
    # Belt and braces: no live `<script` survives anywhere, even as a fragment.
    assert "<script" not in rendered.lower()
