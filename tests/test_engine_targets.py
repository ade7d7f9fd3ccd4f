"""The engine's target index (which targeted shapes may select a write's focus nodes) answers
as asking each shape does (:meth:`_Profile.may_target`), for any profile of focus nodes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ontoloom.schema import Schema
from ontoloom.shacl.engine import _ANY, _Profile
from ontoloom.terms import NamedNode, Term

_SCHEMA = Schema.load()
_VALIDATOR = _SCHEMA.write_validator
_SELECTION = _VALIDATOR._selected(_SCHEMA.hierarchy, None, frozenset())
_TARGETED = {t.term for top in _SELECTION.tops for t in top.targets if t.term is not None}
_TERMS: list[Term] = [*sorted(_TARGETED, key=str), NamedNode("urn:test:other")]
_sets = st.sets(st.sampled_from([*_TERMS, _ANY]), max_size=8)


@settings(max_examples=300, deadline=None)
@given(nodes=st.sets(st.sampled_from(_TERMS), max_size=4), classes=_sets, out=_sets, into=_sets)
def test_the_target_index_selects_the_shapes_that_may_target(
    nodes: set[Term], classes: set[Term], out: set[Term], into: set[Term]
) -> None:
    profile = _Profile(nodes, classes, out, into)
    expected = {top.node for top in _SELECTION.tops if profile.may_target(top)}
    assert profile.targetable(_SELECTION) == expected


def test_the_shipped_shapes_use_the_kinds_the_index_knows() -> None:
    kinds = {t.kind for top in _SELECTION.tops for t in top.targets}
    assert kinds <= {
        "targetNode",
        "targetClass",
        "targetSubjectsOf",
        "targetObjectsOf",
        "sparqlTarget",
    }
    assert len(_SELECTION.tops) > 10  # the index is asked of many shapes, not a few
