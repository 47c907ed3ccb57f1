"""The secret scanner against samples no one here wrote: gitleaks' rule tests and detect-secrets'
plugin tests, in ``../shared/secrets-corpus/`` beside the checkout (``tests.agent.secrets_corpus``
reads and scores them). The rates are printed; the test is skipped where the corpus is absent."""

from __future__ import annotations

import contextlib

import pytest

from agent.secret_scanner import SecretScanner
from tests.agent.secrets_corpus import CORPUS, FORMS, Scores, score

pytestmark = [
    pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no secrets corpus at {CORPUS}"),
    pytest.mark.slow,  # the whole corpus through the scanner (tests/agent/test_secret_scanner.py: the kinds)
]


@pytest.fixture(scope="module")
def scores(request: pytest.FixtureRequest) -> Scores:
    """The scores, written to the terminal as well (the report shows them without ``-s``)."""
    measured = score(SecretScanner())
    report = (
        "\nsecrets corpus:"
        f"\n  gitleaks, the documented kinds' rules: {measured.documented} redacted"
        f"\n  gitleaks, every rule: {measured.gitleaks_tps} redacted"
        f"\n  gitleaks' false-positive samples: {measured.gitleaks_fps} flagged"
        f"\n  of them, those no other gitleaks rule matches: {measured.gitleaks_fps_of_no_rule} flagged"
        f"\n  detect-secrets' positives: {measured.detect_secrets_tps} found"
        f"\n  detect-secrets' negatives: {measured.detect_secrets_fps} flagged"
        "\n  gitleaks, every rule, as each tool shows the sample (redacted; false positives flagged):"
        + "".join(f"\n    {form}: {measured.forms_tps[form]}; {measured.forms_fps[form]}" for form in FORMS)
    )
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        print(report)
    return measured


@pytest.mark.slow  # the whole corpus through the scanner
def test_the_documented_kinds_are_found_as_gitleaks_finds_them(scores: Scores) -> None:
    assert scores.documented.total > 900
    assert scores.documented.rate >= 0.95, scores.documented.missed[:20]


@pytest.mark.slow  # the whole corpus through the scanner
def test_gitleaks_true_positives_are_redacted(scores: Scores) -> None:
    assert scores.gitleaks_tps.total > 6000
    assert scores.gitleaks_tps.rate >= 0.90, scores.gitleaks_tps.missed[:20]


def test_few_of_gitleaks_false_positive_samples_are_flagged(scores: Scores) -> None:
    """At most 8% of every false-positive sample in gitleaks' rules is flagged (the rate over
    those no other gitleaks rule matches is printed beside it). Those still flagged are keys in
    their service's exact format: a sibling rule's true positives (Cloudflare), keys listed
    against a file name or a length gitleaks' rule requires, a JWT."""
    flagged = scores.gitleaks_fps
    assert flagged.total > 370
    assert flagged.rate <= 0.08, str(flagged)


def test_detect_secrets_positives_are_found(scores: Scores) -> None:
    assert scores.detect_secrets_tps.total > 200
    assert scores.detect_secrets_tps.rate >= 0.60, scores.detect_secrets_tps.missed[:20]


@pytest.mark.parametrize("form", [form for form in FORMS if form != "raw"])
def test_every_shown_form_is_redacted_as_the_raw_text_is(scores: Scores, form: str) -> None:
    """Each sample as the read tool, grep (``-n`` and context lines), the text editor and the
    bash tool show it: recall at most 1 point below the raw text's, and false positives at most
    the raw target."""
    raw, tally = scores.forms_tps["raw"], scores.forms_tps[form]
    assert tally.total == raw.total
    missed_here = [m for m in tally.missed if m not in raw.missed]
    assert tally.rate >= raw.rate - 0.01, (str(tally), missed_here[:20])
    assert scores.forms_fps[form].rate <= 0.08, str(scores.forms_fps[form])
