"""Backticked names in messages read as code on HTML pages, and nothing else of the text becomes markup."""

from __future__ import annotations

from app.templating import code_spans


def test_backticked_spans_become_code_and_the_rest_is_escaped():
    assert code_spans("`param` names it") == "<code>param</code> names it"
    assert code_spans("a `<b>` and `x & y`") == "a <code>&lt;b&gt;</code> and <code>x &amp; y</code>"
    assert code_spans("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert code_spans("a lone ` stays, ``, and `two`") == "a lone ` stays, ``, and <code>two</code>"
    assert code_spans("`a\nb`") == "`a\nb`"  # never across lines
