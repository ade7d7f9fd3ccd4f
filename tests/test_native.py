"""Judged SPARQL constraints (ontoloom.shacl.native): the Python stand-ins for the filters of
ol:NoSecrets, held to the store's own evaluation of the SELECTs they stand in for, on
generated names and values that lean towards the awkward cases (case folding, the long s,
the Kelvin sign, dotted and dotless i, separators, suffixes, near-miss token formats)."""

from __future__ import annotations

import pyoxigraph
from hypothesis import given, settings
from hypothesis import strategies as st

from ontoloom.schema import Schema
from ontoloom.secret_text import NO_SECRETS_JUDGES
from ontoloom.shacl import Validator
from ontoloom.shacl.components.sparql import SPARQLConstraintComponent
from ontoloom.shacl.native import digest
from ontoloom.store import scratch
from ontoloom.terms import Literal, NamedNode, Quad
from reliability.plugin import scale

NS = "https://example.org/ns#"
SUBJECT = NamedNode("https://example.org/id/s")


def shipped_selects() -> dict[str, str]:
    shapes = Schema.load().shapes
    return {
        digest(c.select): c.select
        for node in shapes.all_shape_nodes()
        for c in shapes.shape(node).constraints
        if isinstance(c, SPARQLConstraintComponent)
    }


def test_every_judge_stands_in_for_a_query_of_the_shipped_shapes() -> None:
    """An edited query gets another digest and silently loses its judge: this test is what
    says so, so that the judge is brought up to date with the query."""
    assert set(NO_SECRETS_JUDGES) <= set(shipped_selects())


NAME_PIECES = [
    *("pass", "Pass", "PASS", "passwd", "Passphrase", "pwd", "otp", "totp", "pin", "Pins"),
    *("pat", "dsn", "jwt", "auth", "Auth", "key", "Key", "KEY", "keys", "api", "Api", "API"),
    *("secret", "Secret", "token", "Token", "credential", "cookie", "bearer", "Bearer"),
    *("connection", "String", "mnemonic", "seed", "phrase", "Phrase", "private", "access"),
    *("ssh", "signing", "encryption", "authorization", "board", "word", "spin", "path"),
    *("_", "-", ".", "/", ":", "0", "1", "42", "b64", "pem", "value", "tmp", "new", "s"),
    *("\u017f", "\u212a", "\u0130", "\u0131", "\u00df", "\u00e9", "aB", "x"),
]
VALUE_PIECES = [
    *("password", "PASSWORD", "Passwd", "pa\u017f\u017fword", "pwd", "api_key", "API-KEY"),
    *("ap\u0131key", "\u0130", "token", "auth token", "secret", "client secret", "\u212aey"),
    *(":", "=", " ", "\t", "\n", "hunter2", "X", "$", "<", "{", "*", "_", "!", "-"),
    *("AKIA", "ASIA", "ABCDEFGHIJKLMNOP", "0123456789", "abcdefghijklmnopqrstuvwxyz"),
    *("ghp_", "github_pat_", "glpat-", "xoxb-", "sk_live_", "rk_test_", "sk-", "sk-ant-"),
    *("AIza", "eyJ", "eyJhbGciOi", ".", "-----BEGIN ", "RSA ", "PRIVATE KEY", "-----"),
    *(" BLOCK", "A" * 18, "a" * 36, "Z9_-" * 6, "\u00df", "\u00e9"),
    # normalised before judging: zero-width and bidi characters, fullwidth and math forms
    *("\u200b", "\u202e", "\u00ad", "\ufeff", "\uff21\uff2b\uff29\uff21", "\uff1a", "\U0001d400"),
    # written forms: JSON quotes, a value on the next line, headers, URL user info, code
    *('"', "'", "\r\n", "Authorization", "Bearer ", "Basic ", "://", "@", "postgres://a:", "=>"),
    *("settings.API_KEY", "N/A", "required", "correcthorsebattery", "123456", "12"),
]


@st.composite
def names(draw: st.DrawFn) -> NamedNode:
    local = "".join(draw(st.lists(st.sampled_from(NAME_PIECES), min_size=1, max_size=6)))
    try:
        return NamedNode(NS + local)
    except ValueError:
        return NamedNode(NS + "p")


values = st.one_of(
    st.lists(st.sampled_from(VALUE_PIECES), max_size=8).map(lambda p: Literal("".join(p))),
    st.text(max_size=30).map(Literal),
    st.lists(st.sampled_from(VALUE_PIECES), max_size=4).map(
        lambda p: Literal("".join(p), language="en")
    ),
    st.sampled_from([NamedNode(NS + "token=abc"), NamedNode("urn:x:password:Secret1")]),
)


def by_the_store(select: str, triples: list[tuple[NamedNode, Literal | NamedNode]]) -> set:
    store = pyoxigraph.Store()
    store.extend(pyoxigraph.Quad(SUBJECT, p, o, pyoxigraph.DefaultGraph()) for p, o in triples)
    found = set()
    solutions = store.query(select)
    has_kind = "kind" in [v.value for v in solutions.variables]
    for row in solutions:
        kind = row["kind"] if has_kind else None
        found.add((row["path"], row["value"], kind.value if kind is not None else None))
    return found


def by_the_judge(select: str, triples: list[tuple[NamedNode, Literal | NamedNode]]) -> set:
    judge = NO_SECRETS_JUDGES[digest(select)]
    found = set()
    for p, o in set(triples):
        extra = judge(p, o)
        if extra is not None:
            kind = extra.get("kind")
            found.add((p, o, kind.value if kind is not None else None))
    return found


# Every judged SELECT of the shipped shapes run in a store an example: `make test` runs 100
# drawn examples (the same each run) beside the known cases below; `make soak` 300 fresh ones.
@settings(max_examples=scale(100, 300), deadline=None)
@given(st.lists(st.tuples(names(), values), min_size=1, max_size=12))
def test_the_judges_find_exactly_what_the_selects_find(triples) -> None:
    selects = shipped_selects()
    for key in NO_SECRETS_JUDGES:
        assert by_the_judge(selects[key], triples) == by_the_store(selects[key], triples)


def test_the_judges_agree_with_the_selects_on_known_cases() -> None:
    """Each kind at least once, and the near misses beside them: generated examples are
    not left to find these by chance."""
    cases = [
        (NamedNode(NS + "apiKey"), Literal("x")),
        (NamedNode(NS + "api_key_b64"), Literal("x")),
        (NamedNode(NS + "keyboard"), Literal("x")),
        (NamedNode(NS + "spin"), Literal("x")),
        (NamedNode(NS + "pa\u017f\u017fword"), Literal("x")),
        (NamedNode(NS + "p"), Literal("AKIA" + "A" * 16)),
        (NamedNode(NS + "p"), Literal("ghp_" + "a" * 36)),
        (NamedNode(NS + "p"), Literal("glpat-" + "a" * 20)),
        (NamedNode(NS + "p"), Literal("xoxb-" + "a" * 10)),
        (NamedNode(NS + "p"), Literal("sk_live_abc4567890")),
        (NamedNode(NS + "p"), Literal("task_test_suite_runner_for_ci")),
        (NamedNode(NS + "p"), Literal("risk-assessment-for-payments-team")),
        (NamedNode(NS + "p"), Literal("sk-" + "a" * 20)),
        (NamedNode(NS + "p"), Literal("AIza" + "a" * 35)),
        (NamedNode(NS + "p"), Literal("eyJabcde.eyJabcde.abcde")),
        (NamedNode(NS + "p"), Literal("-----BEGIN RSA PRIVATE KEY-----")),
        (NamedNode(NS + "p"), Literal("password: hunter2")),
        (NamedNode(NS + "p"), Literal("pa\u017f\u017fword: Hunter2")),
        (NamedNode(NS + "p"), Literal("ap\u0131_key: Hunter2")),
        (NamedNode(NS + "p"), Literal("\u212aey: Hunter2")),
        (NamedNode(NS + "p"), Literal("password: hunter")),
        (NamedNode(NS + "p"), Literal("password: $HOME")),
        # written forms in JSON, logs and configs: a secret, then the near misses
        (NamedNode(NS + "p"), Literal('{"d": "{\\"password\\": \\"f?PID6&Ad.M4\\"}"}')),
        (NamedNode(NS + "p"), Literal('{"v": "password:\\n  w+6=B_LyKw^PcNA4"}')),
        (NamedNode(NS + "p"), Literal("Password: eirzfgfcty")),
        (NamedNode(NS + "p"), Literal("PASSWORD : XOn.CuhE55iD")),
        (
            NamedNode(NS + "p"),
            Literal("\uff41\uff50\uff49\uff3f\uff4b\uff45\uff59\uff1d\uff02xqzvbnm9\uff02"),
        ),
        (NamedNode(NS + "p"), Literal("password: required")),
        (NamedNode(NS + "p"), Literal("password: vault:secret/data/db#password")),
        (NamedNode(NS + "p"), Literal("password: settings.API_KEY")),
        (NamedNode(NS + "p"), Literal("token: op://Private/db/password")),
    ]
    selects = shipped_selects()
    for key in NO_SECRETS_JUDGES:
        assert by_the_judge(selects[key], cases) == by_the_store(selects[key], cases)
    values_key = next(k for k in NO_SECRETS_JUDGES if "?kind" in selects[k])
    found = by_the_judge(selects[values_key], cases)
    # the nine formats, "password: hunter2" and its long-s form, the five written forms;
    # not the dotless-i "api_key" (a dotless i is no i), "Key: ..." (no key word), nor
    # values without a secret's shape: a word, a reference to a vault or to code
    assert len(found) == 16


def test_a_judge_serves_every_run_of_its_own_query_only() -> None:
    """The wiring, shown with a judge that lies: a focused and a whole-store validation of
    the shape it is registered for report what the judge says; a validator without it
    evaluates the SELECT."""
    schema = Schema.load()
    selects = shipped_selects()
    names_key = next(k for k in NO_SECRETS_JUDGES if "?kind" not in selects[k])
    liar = Validator(schema.shapes, judges={names_key: lambda path, value: {}})
    honest = Validator(schema.shapes)
    node = NamedNode("https://example.org/id/n")
    backend = scratch([Quad(node, NamedNode(NS + "colour"), Literal("red"))])
    only = [NamedNode("https://ontoloom.dev/ns#NoSecrets")]

    def forbidden(validator: Validator, focus: list | None) -> int:
        report = validator.validate(backend, focus, only=only)
        return sum(r.constraint_name == "forbidden" for r in report.results)

    assert forbidden(liar, [node]) == 1  # the judge was asked, and it said "a secret name"
    assert forbidden(liar, None) == 1  # and so was it for the whole store
    assert forbidden(honest, [node]) == 0
