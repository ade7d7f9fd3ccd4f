"""SHACL validation compiled to SPARQL and run inside the store.

This package knows RDF and SHACL, not ontoloom: shapes in, results out.
"""

from ontoloom.shacl.engine import Report, Result, Validator
from ontoloom.shacl.shapes import Shape, ShapeSet

__all__ = ["Report", "Result", "Shape", "ShapeSet", "Validator"]
