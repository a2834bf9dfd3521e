"""A markdown table's column alignment comes out as a class, never as an inline style (the Content-Security-Policy
refuses inline styles: the release card's right-aligned numbers tripped it)."""

from annotation.guideline_markdown import guideline_html


def test_aligned_columns_carry_classes_not_styles():
    html = str(guideline_html("| a | b | c |\n| :--- | ---: | :---: |\n| 1 | 2 | 3 |\n"))
    assert "style=" not in html
    assert '<th class="num">b</th>' in html and '<td class="num">2</td>' in html
    assert '<td class="centre">3</td>' in html and "<td>1</td>" in html
