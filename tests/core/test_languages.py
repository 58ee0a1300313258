"""The operator's language among those ARIA answers in, deterministically (lingua, restricted)."""

import pytest

from core.languages import language_of


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Why did P-02 trip?", "en"),
        ("Which cell has the worst MTBF this month?", "en"),
        ("pourquoi P-02 a déclenché ?", "fr"),
        ("¿Por qué se disparó la P-02?", "es"),
        ("Warum hat P-02 ausgelöst?", "de"),
        ("Perché P-02 è scattato?", "it"),
        ("Por que a P-02 disparou?", "pt"),
        ("Quelle cellule a le pire MTBF ce mois-ci ?", "fr"),
    ],
)
def test_short_operator_questions(text, code):
    assert language_of(text) == code
    assert language_of(text) == code  # the same answer every time


@pytest.mark.parametrize("text", ["P-02?", "", "  ", "42", "C-01 P-02"])
def test_too_little_text_falls_back_to_the_default(text):
    assert language_of(text) == "en"
    assert language_of(text, default="fr") == "fr"


@pytest.mark.parametrize("text", ["do not cancel WO-1", "pare a bomba"])
def test_text_too_close_to_call_falls_back_to_the_default(text):
    """'do not cancel' scored Italian 0.25 against English 0.20 and was answered in Italian;
    'pare a bomba' is Portuguese and Spanish alike."""
    assert language_of(text) == "en"
    assert language_of(text, default="fr") == "fr"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("<script>alert(1)</script> P-02?", "en"),
        ("<b>pourquoi</b> P-02 a déclenché ?", "fr"),
        ("Why did <i>P-02</i> trip?", "en"),
    ],
)
def test_markup_tags_are_not_words_of_the_question(text, code):
    """'<script>alert(1)</script> P-02?' read as the words 'script alert script' and was answered in
    French; the tags' names are not the operator's language, the text between them is."""
    assert language_of(text) == code
