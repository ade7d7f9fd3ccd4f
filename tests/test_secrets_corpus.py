"""The corpus of `make bench-secrets` (bench/secrets_corpus.py): large, labelled, every format
in every carrier, the same for the same seed; and the bench itself runs end to end."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import secrets_corpus as sc  # noqa: E402

#: The formats the bench promises (its brief), by the corpus's names for them.
PROMISED = {
    "aws-akia", "aws-asia", "github-ghp", "github-gho", "github-ghu", "github-ghs", "github-ghr",
    "github-fine-grained", "gitlab-glpat", "slack-xoxb", "slack-xoxp", "slack-webhook",
    "stripe-sk-live", "stripe-rk-live", "stripe-sk-test", "openai-project", "anthropic",
    "google-api-key", "npm", "huggingface", "jwt", "pem-rsa", "pem-ec", "pem-openssh",
    "pem-pkcs8", "age", "digitalocean", "shopify", "sendgrid", "pypi", "twilio", "databricks",
    "linear", "postman", "grafana-cloud", "grafana-service-account", "sentry-user", "doppler",
    "vault", "atlassian", "notion", "perplexity", "heroku", "square", "password-lower",
    "password-upper", "password-mixed", "password-json", "password-env", "password-next-line",
    "bearer", "basic", "url-postgres", "url-mysql", "url-redis", "url-amqp", "url-https",
    "api-key", "client-secret",
}  # fmt: skip

#: A few shapes checked here from the providers' formats, independently of the corpus code.
SHAPES = {
    "aws-akia": r"AKIA[A-Z2-7]{16}",
    "github-ghp": r"ghp_[A-Za-z0-9]{36}",
    "github-fine-grained": r"github_pat_\w{82}",
    "anthropic": r"sk-ant-api03-[\w-]{93}AA",
    "openai-project": r"sk-proj-[\w-]{74}T3BlbkFJ[\w-]{74}",
    "huggingface": r"hf_[A-Za-z]{34}",
    "sendgrid": r"SG\.[\w-]{22}\.[\w-]{43}",
    "postman": r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}",
    "jwt": r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+",
    "age": r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
}


@pytest.fixture(scope="module")
def corpus() -> sc.Corpus:
    return sc.corpus()


def test_at_least_ten_thousand_distinct_ordinary_texts(corpus: sc.Corpus) -> None:
    texts = [i.text for i in corpus.ordinary if i.carrier == "value"]
    assert len(set(texts)) == len(texts) >= 10_000
    assert {i.format for i in corpus.ordinary} >= {"slug", "prose", "url", "non-english"}
    assert not {i.text for i in corpus.ordinary} & {i.text for i in corpus.fakes}


def test_every_format_travels_in_every_carrier_it_can(corpus: sc.Corpus) -> None:
    cells = {(i.format, i.carrier) for i in corpus.fakes}
    assert set(sc.FORMATS) >= PROMISED
    for fmt in sc.FORMATS:
        assert set(sc.TEXT_CARRIERS) <= set(sc.applicable(fmt)), fmt
        for carrier in sc.applicable(fmt):
            assert (fmt, carrier) in cells, (fmt, carrier)
    assert {c for _, c in cells} == set(sc.CARRIERS)
    for fmt in set(sc.FORMATS) - {f for f in sc.FORMATS if f.startswith(("pem-", "url-"))}:
        if fmt not in ("password-next-line",):
            assert (fmt, "property-name") in cells, fmt


def test_fakes_have_their_formats_shape_and_disguises_hide_it(corpus: sc.Corpus) -> None:
    for item in corpus.fakes:
        if item.carrier == "value" and item.format in SHAPES:
            assert re.fullmatch(SHAPES[item.format], item.text), item.format
        if item.carrier in sc.INVISIBLE:
            assert sc.INVISIBLE[item.carrier] in item.text
            assert item.text.replace(sc.INVISIBLE[item.carrier], "") != item.text
        if item.carrier == "fullwidth":
            assert item.secret not in item.text
            assert item.secret in unicodedata.normalize("NFKC", item.text)
        if item.carrier in ("value", "sentence", "multiline"):
            assert item.secret in item.text, (item.format, item.carrier)


def test_the_same_seed_gives_the_same_corpus(corpus: sc.Corpus) -> None:
    again = sc.corpus()
    assert again.ordinary == corpus.ordinary and again.fakes == corpus.fakes
    other = sc.corpus(seed=1)
    assert other.fakes != corpus.fakes
    assert sc.sample(corpus.fakes, 50, 7) == sc.sample(corpus.fakes, 50, 7)


def test_a_fake_is_never_shown_whole(corpus: sc.Corpus) -> None:
    for item in corpus.fakes:
        assert item.secret not in item.shown() or len(item.secret) <= 6


def test_the_bench_runs_quick(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / "secrets_bench.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| door |" in done.stdout
    figures = json.loads(out.read_text())
    doors = {d["door"]: d for d in figures["doors"]}
    assert set(doors) >= {"judge", "import", "cli", "mcp", "http", "rebuild"}
    for name in ("judge", "import", "cli", "mcp", "http", "rebuild"):
        assert doors[name]["error"] is None and doors[name]["fakes"] > 0, name
