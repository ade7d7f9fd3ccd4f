"""Prefix declarations for SHACL-SPARQL queries (SHACL 5.2.1): the union of the values of
sh:prefixes/owl:imports*/sh:declare of a constraint, validator, target or rule.

Beyond the spec, as both reference implementations do (pySHACL through rdflib, TopBraid
through the graph's prefix mapping), a prefix the input files themselves declare (Turtle
@prefix) is known, and so are the five vocabularies every shapes graph is written in (rdf,
rdfs, owl, xsd, sh); sh:declare wins over the files, the files over the five. Any other
prefix a query uses is an error naming the shape, the prefix and the fix, never a parser dump.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.shacl.render import WELL_KNOWN
from ontoloom.shacl.shapes import ShapesError, sh
from ontoloom.terms import Literal, NamedNode, Term
from ontoloom.vocab import OWL

__all__ = ["declared_prefixes", "functions_called", "prologue"]

_STRINGS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
)
# A comment: from a # that no > follows on its line (a # before > is inside an IRI).
_COMMENTS = re.compile(r"(?m)#[^\n>]*$")


def declared_prefixes(g: TripleIndex, node: Term, where: str) -> dict[str, str]:
    """The prefix mappings of ``node``'s sh:prefixes, following owl:imports.

    :raises ShapesError: a declaration without exactly one sh:prefix and sh:namespace
        literal, or two namespaces for one prefix (``where`` names the shape for the error).
    """
    out: dict[str, str] = {}
    stack, seen = list(g.objects(node, sh("prefixes"))), set()
    while stack:
        ontology = stack.pop()
        if ontology in seen:
            continue
        seen.add(ontology)
        stack.extend(g.objects(ontology, NamedNode(OWL + "imports")))
        for decl in g.objects(ontology, sh("declare")):
            prefixes, namespaces = g.objects(decl, sh("prefix")), g.objects(decl, sh("namespace"))
            if len(prefixes) != 1 or len(namespaces) != 1:
                raise ShapesError(
                    f"{where}: a sh:declare of {ontology} needs exactly one sh:prefix and one "
                    "sh:namespace"
                )
            prefix, namespace = prefixes[0], namespaces[0]
            if not isinstance(prefix, Literal) or not isinstance(namespace, Literal | NamedNode):
                raise ShapesError(
                    f"{where}: a sh:declare of {ontology} has a sh:prefix or sh:namespace that "
                    'is not a literal; write sh:prefix "ex" ; sh:namespace "http://…"^^xsd:anyURI'
                )
            name, iri = prefix.value, namespace.value
            if out.get(name, iri) != iri:
                raise ShapesError(
                    f"{where}: the prefix {name}: is declared twice, as <{out[name]}> and <{iri}>;"
                    " keep one namespace per prefix"
                )
            out[name] = iri
    return out


def prologue(declared: Mapping[str, str], files: Mapping[str, str] = MappingProxyType({})) -> str:
    """PREFIX lines: the well-known vocabularies, the files' prefixes, the declared ones."""
    merged = {**WELL_KNOWN, **files, **declared}
    return "\n".join(f"PREFIX {name}: <{iri}>" for name, iri in sorted(merged.items()))


_PREFIX_DECL = re.compile(r"(?i)\bPREFIX\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>")
_CALL = re.compile(r"(?:<([^<>\"{}|^`\\\s]*)>|(?<![\w?$:.-])([A-Za-z][\w.-]*)?:([\w.-]*))\s*\(")


def functions_called(query: str) -> set[str]:
    """IRIs the query calls as functions (``ex:f(…)`` or ``<iri>(…)``), its prefixes expanded."""
    code = _COMMENTS.sub("", _STRINGS.sub('""', query))
    prefixes = {(m.group(1) or ""): m.group(2) for m in _PREFIX_DECL.finditer(code)}
    out = set()
    for m in _CALL.finditer(code):
        if m.group(1) is not None:
            out.add(m.group(1))
        elif (m.group(2) or "") in prefixes:
            out.add(prefixes[m.group(2) or ""] + m.group(3))
    return out
