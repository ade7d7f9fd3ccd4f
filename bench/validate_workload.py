"""An ordinary SHACL workload, written the way people write data: `make bench-validate`.

Ten node shapes of the kinds every real shapes file has — sh:datatype, counts, sh:pattern,
sh:in, sh:class, numeric ranges, sh:languageIn / sh:uniqueLang — and one sh:sparql join,
over data that mixes in what nobody's own generator writes: decimals as ``"1000.50"``,
integers as ``"007"`` or ``"+5"``, ``xsd:int`` beside ``xsd:integer``, language-tagged
strings, a few literals that are not well formed, and about 5% of nodes broken on purpose.

``python bench/validate_workload.py TRIPLES OUT_DIR`` writes ``data.ttl`` and ``shapes.ttl``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

SHAPES = """\
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix ex: <http://example.org/shop#> .

ex:CustomerShape a sh:NodeShape ; sh:targetClass ex:Customer ;
  sh:property [ sh:path ex:name ; sh:datatype xsd:string ; sh:minCount 1 ; sh:maxCount 1 ] ;
  sh:property [ sh:path ex:email ; sh:pattern "^[^@ ]+@[^@ ]+\\\\.[a-z]+$" ; sh:maxCount 2 ] ;
  sh:property [ sh:path ex:tier ; sh:in ( "gold" "silver" "bronze" ) ] ;
  sh:property [ sh:path ex:age ; sh:datatype xsd:integer ;
                sh:minInclusive 18 ; sh:maxExclusive 130 ] .

ex:OrderShape a sh:NodeShape ; sh:targetClass ex:Order ;
  sh:property [ sh:path ex:customer ; sh:class ex:Customer ; sh:minCount 1 ; sh:maxCount 1 ] ;
  sh:property [ sh:path ex:total ; sh:datatype xsd:decimal ; sh:minInclusive 0 ;
                sh:maxCount 1 ] ;
  sh:property [ sh:path ex:status ; sh:in ( "open" "paid" "shipped" "cancelled" ) ;
                sh:minCount 1 ] ;
  sh:property [ sh:path ex:placed ; sh:datatype xsd:date ; sh:maxCount 1 ] ;
  sh:property [ sh:path ex:line ; sh:minCount 1 ; sh:node ex:LineShape ] ;
  sh:sparql [
    sh:message "an order's total is below the sum of its lines" ;
    sh:select \"\"\"
      PREFIX ex: <http://example.org/shop#>
      SELECT $this (?total AS ?value) WHERE {
        $this ex:total ?total .
        { SELECT $this (SUM(?price * ?qty) AS ?sum) WHERE {
            $this ex:line ?l . ?l ex:price ?price ; ex:quantity ?qty } GROUP BY $this }
        FILTER (?total < ?sum)
      }\"\"\" ] .

ex:LineShape a sh:NodeShape ;
  sh:property [ sh:path ex:product ; sh:class ex:Product ; sh:minCount 1 ; sh:maxCount 1 ] ;
  sh:property [ sh:path ex:quantity ; sh:datatype xsd:integer ; sh:minInclusive 1 ;
                sh:minCount 1 ] ;
  sh:property [ sh:path ex:price ; sh:datatype xsd:decimal ; sh:minExclusive 0 ;
                sh:minCount 1 ] .

ex:ProductShape a sh:NodeShape ; sh:targetClass ex:Product ;
  sh:property [ sh:path ex:sku ; sh:pattern "^[A-Z]{3}-[0-9]{4}$" ; sh:minCount 1 ;
                sh:maxCount 1 ] ;
  sh:property [ sh:path ex:label ; sh:languageIn ( "en" "de" "fr" ) ; sh:uniqueLang true ;
                sh:minCount 1 ] ;
  sh:property [ sh:path ex:weight ; sh:datatype xsd:decimal ; sh:maxInclusive 1000 ] ;
  sh:property [ sh:path ex:stock ; sh:datatype xsd:integer ; sh:minInclusive 0 ] .

ex:SupplierShape a sh:NodeShape ; sh:targetSubjectsOf ex:supplies ;
  sh:property [ sh:path ex:supplies ; sh:class ex:Product ] ;
  sh:property [ sh:path ex:country ; sh:in ( "DE" "FR" "NL" "US" ) ; sh:maxCount 1 ] ;
  sh:property [ sh:path ex:rating ; sh:datatype xsd:decimal ; sh:minInclusive 0 ;
                sh:maxInclusive 5 ] .
"""

_TIERS = ["gold", "silver", "bronze"]
_STATUS = ["open", "paid", "shipped", "cancelled"]
_COUNTRIES = ["DE", "FR", "NL", "US"]


def _decimal(value: float, rng: random.Random) -> str:
    """A decimal the way people write one: trailing zeros, a plus sign, or canonical."""
    text = f"{value:.2f}"
    style = rng.random()
    if style < 0.4:
        return f'"{text}"^^xsd:decimal'  # "1000.50": not canonical
    if style < 0.5:
        return f'"+{text}"^^xsd:decimal'
    if style < 0.8:
        return f'"{text.rstrip("0").rstrip(".") or "0"}"^^xsd:decimal'
    return text  # a Turtle decimal literal, as written


def _integer(value: int, rng: random.Random) -> str:
    style = rng.random()
    if style < 0.2:
        return f'"{value:03d}"^^xsd:integer'  # "007"
    if style < 0.3:
        return f'"{value}"^^xsd:int'  # another datatype: sh:datatype xsd:integer refuses it
    return str(value)


def generate(triples: int, seed: int = 7) -> str:
    """Turtle data of about ``triples`` triples."""
    rng = random.Random(seed)
    # about 12 triples a customer, 20 an order (with two lines), 9 a product
    units = max(1, triples // 38)
    customers, orders, products, suppliers = units, 2 * units, units, max(1, units // 10)
    out = [
        "@prefix ex: <http://example.org/shop#> .",
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .",
        "",
    ]
    broken = lambda: rng.random() < 0.05  # noqa: E731 - one draw per node
    for i in range(products):
        bad = broken()
        label_tags = ["en", "de"] if not bad else ["en", "en"]
        out.append(
            f'ex:p{i} a ex:Product ; ex:sku "{"ABC" if not bad else "abc"}-{i % 10000:04d}" ; '
            + " ; ".join(f'ex:label "product {i} {t}"@{t}' for t in label_tags)
            + f" ; ex:weight {_decimal(rng.uniform(0.1, 999.0 if not bad else 2000.0), rng)}"
            + f" ; ex:stock {_integer(rng.randint(0 if not bad else -5, 500), rng)} ."
        )
    for i in range(customers):
        bad = broken()
        email = f"user{i}@example.org" if not bad else f"user {i}@nowhere"
        tier = rng.choice(_TIERS) if not bad else "platinum"
        name = f'"Customer {i}"' if rng.random() < 0.99 else f'"Customer {i}"@en'
        out.append(
            f'ex:c{i} a ex:Customer ; ex:name {name} ; ex:email "{email}" ; '
            f'ex:tier "{tier}" ; ex:age {_integer(rng.randint(18 if not bad else 5, 90), rng)} .'
        )
    for i in range(orders):
        bad = broken()
        lines = []
        total = 0.0
        for _ in range(2):
            qty = rng.randint(1, 5)
            price = round(rng.uniform(1.0, 200.0), 2)
            total += qty * price
            lines.append(
                f"[ ex:product ex:p{rng.randrange(products)} ; ex:quantity {_integer(qty, rng)} ;"
                f" ex:price {_decimal(price, rng)} ]"
            )
        if bad:
            total -= 10.0
        status = rng.choice(_STATUS) if not bad or rng.random() < 0.5 else "lost"
        customer = f"ex:c{rng.randrange(customers)}" if not bad else f"ex:p{i % products}"
        out.append(
            f"ex:o{i} a ex:Order ; ex:customer {customer} ; ex:total {_decimal(total, rng)} ; "
            f'ex:status "{status}" ; ex:placed "2026-{1 + i % 12:02d}-{1 + i % 28:02d}"^^xsd:date'
            f" ; ex:line {', '.join(lines)} ."
        )
    for i in range(suppliers):
        bad = broken()
        supplied = ", ".join(f"ex:p{rng.randrange(products)}" for _ in range(3))
        if bad:
            supplied += f", ex:c{i % customers}"
        rating = _decimal(rng.uniform(0.0, 5.0 if not bad else 9.0), rng)
        out.append(
            f'ex:s{i} ex:supplies {supplied} ; ex:country "{rng.choice(_COUNTRIES)}" ; '
            f"ex:rating {rating} ."
        )
    return "\n".join(out) + "\n"


def write(triples: int, directory: Path, seed: int = 7) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    data, shapes = directory / "data.ttl", directory / "shapes.ttl"
    data.write_text(generate(triples, seed), encoding="utf-8")
    shapes.write_text(SHAPES, encoding="utf-8")
    return data, shapes


if __name__ == "__main__":
    paths = write(int(sys.argv[1]), Path(sys.argv[2]))
    print(*paths)
